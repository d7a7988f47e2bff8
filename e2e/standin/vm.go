package standin

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// syncVM plays, for one VM and its VMI, the parts KubeVirt's own VirtualMachine controller (run beside the
// stand-in by the test bed) leaves to others: Harvester's VM controller (its finalizer, the PVCs of
// volumeClaimTemplates, their removal on delete), and, for the VMI that controller creates, virt-api's VMI
// mutator and virt-handler (advanceVMI, settleVMI). It returns how soon it wants to run again
// for a pending delay.
func (s *StandIn) syncVM(ctx context.Context, namespace, name string) (time.Duration, error) {
	vm, err := cached[*kubevirtv1.VirtualMachine](s.vms, namespace, name)
	if err != nil {
		return 0, err
	}
	vmi, err := cached[*kubevirtv1.VirtualMachineInstance](s.vmis, namespace, name)
	if err != nil {
		return 0, err
	}
	var next wait
	if vmi != nil {
		after, err := s.syncVMI(ctx, vm, vmi)
		if err != nil {
			return 0, err
		}
		next.add(after)
	}
	if vm == nil {
		if vmi == nil {
			s.guests.discardDisk(namespace, name)
		}
		return next.d, nil
	}
	if vm.DeletionTimestamp != nil {
		return next.d, s.syncDeletingVM(ctx, vm)
	}
	if !slices.Contains(vm.Finalizers, finalizerHarvesterVM) {
		upd := vm.DeepCopy()
		upd.Finalizers = append(upd.Finalizers, finalizerHarvesterVM)
		_, err := s.virt.KubevirtV1().VirtualMachines(namespace).Update(ctx, upd, metav1.UpdateOptions{})
		return 0, err // the update's watch event brings the VM back
	}
	return next.d, s.ensurePVCs(ctx, vm)
}

// syncVMI moves the VMI of vm (nil when the VM is gone) along: settling one being deleted or final, advancing a
// live one.
func (s *StandIn) syncVMI(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (time.Duration, error) {
	switch {
	case vmi.DeletionTimestamp != nil || vmi.IsFinal():
		return s.settleVMI(ctx, vmi) // whether or not its VM still exists
	case vm == nil:
		return 0, nil // its VM is gone: the garbage collector deletes it, then settleVMI stops it
	}
	_, after, err := s.advanceVMI(ctx, vm, vmi)
	return after, err
}

// syncDeletingVM runs Harvester's OnRemove: delete the PVCs named in removedPersistentVolumeClaims, then drop its
// finalizer. KubeVirt's controller stops the VMI and drops its own finalizer; the garbage collector does the rest.
func (s *StandIn) syncDeletingVM(ctx context.Context, vm *kubevirtv1.VirtualMachine) error {
	if !slices.Contains(vm.Finalizers, finalizerHarvesterVM) {
		return nil
	}
	if err := s.removePVCs(ctx, vm); err != nil {
		return err
	}
	upd := vm.DeepCopy()
	upd.Finalizers = slices.DeleteFunc(upd.Finalizers, func(x string) bool { return x == finalizerHarvesterVM })
	_, err := s.virt.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
	return ignoreNotFound(err)
}

// wait keeps the shortest positive delay added to it.
type wait struct{ d time.Duration }

func (w *wait) add(d time.Duration) {
	if d > 0 && (w.d == 0 || d < w.d) {
		w.d = d
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// cached returns the informer's object, or nil when it has none. Never modify it: DeepCopy first.
func cached[T any](inf cache.SharedIndexInformer, namespace, name string) (T, error) {
	var zero T
	obj, ok, err := inf.GetIndexer().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("cache holds a %T for %s/%s", obj, namespace, name)
	}
	return t, nil
}
