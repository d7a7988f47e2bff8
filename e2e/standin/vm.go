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

// syncVM reconciles one VM and its VMI. It writes the VM at most once per call (finalizers, spec or status) and
// returns how soon it wants to run again for a pending delay.
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
	// virt-handler: a VMI being deleted stops its guest, whether or not its VM still exists.
	if vmi != nil && vmi.DeletionTimestamp != nil {
		after, err := s.stopGuest(ctx, vmi)
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
		return next.d, s.syncDeletingVM(ctx, vm, vmi)
	}
	if missing := missingFinalizers(vm); len(missing) > 0 {
		upd := vm.DeepCopy()
		upd.Finalizers = append(upd.Finalizers, missing...)
		_, err := s.virt.KubevirtV1().VirtualMachines(namespace).Update(ctx, upd, metav1.UpdateOptions{})
		return 0, err // the update's watch event brings the VM back
	}
	if err := s.ensurePVCs(ctx, vm); err != nil {
		return 0, err
	}
	vmi, startFailure, after, done, err := s.syncRunStrategy(ctx, vm, vmi)
	if err != nil || done {
		return 0, err
	}
	next.add(after)
	if vmi != nil && vmi.DeletionTimestamp == nil && !vmi.IsFinal() {
		if vmi, after, err = s.advanceVMI(ctx, vm, vmi); err != nil {
			return 0, err
		}
		next.add(after)
		if vmi.IsRunning() {
			startFailure = nil // it started: the crash loop, if any, is over
		}
	}
	return next.d, s.updateVMStatus(ctx, vm, vmi, startFailure)
}

// syncRunStrategy does what virt-controller does for the VM's runStrategy: create the VMI, delete it, or
// leave it. It returns the VMI as it now is (nil when there is none or it is being removed), the
// status.startFailure to record, a delay before the next start attempt, and done=true when it updated the VM
// itself (the caller must not write the VM again in this round). A VMI it deletes is returned as it was: it
// counts as Stopping until it is gone.
func (s *StandIn) syncRunStrategy(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (
	_ *kubevirtv1.VirtualMachineInstance, startFailure *kubevirtv1.VirtualMachineStartFailure, after time.Duration, done bool, err error,
) {
	startFailure = vm.Status.StartFailure
	rs, err := vm.RunStrategy()
	if err != nil {
		s.opts.Logf("standin: vm %s/%s: %v", vm.Namespace, vm.Name, err)
		return vmi, startFailure, 0, false, nil
	}
	if vmi != nil && vmi.DeletionTimestamp != nil {
		return vmi, startFailure, 0, false, nil // stopping; decide again once it is gone
	}
	switch rs {
	case kubevirtv1.RunStrategyHalted:
		if vmi != nil && !vmi.IsFinal() {
			return vmi, startFailure, 0, false, s.deleteVMI(ctx, vmi, "runStrategy Halted")
		}
		return vmi, startFailure, 0, false, nil
	case kubevirtv1.RunStrategyManual:
		return vmi, startFailure, 0, false, nil // started and stopped only through subresources, which do not exist here
	case kubevirtv1.RunStrategyOnce:
		if vmi != nil && vmi.IsFinal() {
			// KubeVirt turns Once into Halted when the single run is over.
			upd := vm.DeepCopy()
			halted := kubevirtv1.RunStrategyHalted
			upd.Spec.RunStrategy = &halted
			_, err := s.virt.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
			return vmi, startFailure, 0, true, err
		}
	case kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyRerunOnFailure:
		if vmi != nil && vmi.IsFinal() {
			failed := vmi.Status.Phase == kubevirtv1.Failed
			if !failed && rs == kubevirtv1.RunStrategyRerunOnFailure {
				return vmi, startFailure, 0, false, nil // the guest shut itself down: stays Stopped
			}
			if failed {
				startFailure = recordFailure(startFailure, vmi, s.opts.CrashLoopDelay)
			}
			return vmi, startFailure, 0, false, s.deleteVMI(ctx, vmi, "restart after "+string(vmi.Status.Phase))
		}
	}
	if vmi != nil {
		return vmi, startFailure, 0, false, nil
	}
	if startFailure != nil && startFailure.RetryAfterTimestamp != nil {
		if wait := time.Until(startFailure.RetryAfterTimestamp.Time); wait > 0 {
			return nil, startFailure, wait, false, nil // crash-loop back-off
		}
	}
	created, err := s.virt.KubevirtV1().VirtualMachineInstances(vm.Namespace).Create(ctx, newVMI(vm), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil, startFailure, 0, false, fmt.Errorf("VMI %s/%s exists but is not in the cache yet", vm.Namespace, vm.Name)
	}
	if err != nil {
		return nil, startFailure, 0, false, err
	}
	s.opts.Logf("standin: vm %s/%s: created VMI (uid %s)", vm.Namespace, vm.Name, created.UID)
	return created, startFailure, 0, false, nil
}

// syncDeletingVM runs the removal handlers in order, one write per round: status Terminating; Harvester's
// OnRemove (delete the PVCs named in removedPersistentVolumeClaims, drop its finalizer); virt-controller (stop
// the VMI, drop its finalizer once the VMI is gone). The garbage collector does the rest.
func (s *StandIn) syncDeletingVM(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) error {
	vms := s.virt.KubevirtV1().VirtualMachines(vm.Namespace)
	if vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusTerminating {
		upd := vm.DeepCopy()
		upd.Status.PrintableStatus = kubevirtv1.VirtualMachineStatusTerminating
		_, err := vms.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		return ignoreNotFound(err)
	}
	if slices.Contains(vm.Finalizers, finalizerHarvesterVM) {
		if err := s.removePVCs(ctx, vm); err != nil {
			return err
		}
		return ignoreNotFound(s.dropFinalizer(ctx, vm, finalizerHarvesterVM))
	}
	if vmi != nil {
		if vmi.DeletionTimestamp == nil {
			return s.deleteVMI(ctx, vmi, "its VM is being deleted")
		}
		return nil // stopGuest runs on the VMI's events
	}
	if slices.Contains(vm.Finalizers, finalizerKubeVirtVM) {
		return ignoreNotFound(s.dropFinalizer(ctx, vm, finalizerKubeVirtVM))
	}
	return nil
}

func (s *StandIn) dropFinalizer(ctx context.Context, vm *kubevirtv1.VirtualMachine, f string) error {
	upd := vm.DeepCopy()
	upd.Finalizers = slices.DeleteFunc(upd.Finalizers, func(x string) bool { return x == f })
	_, err := s.virt.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
	return err
}

func (s *StandIn) deleteVMI(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, why string) error {
	s.opts.Logf("standin: vm %s/%s: deleting VMI (uid %s): %s", vmi.Namespace, vmi.Name, vmi.UID, why)
	uid := vmi.UID
	err := s.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsConflict(err) {
		return nil // a newer VMI already replaced this one
	}
	return ignoreNotFound(err)
}

// missingFinalizers lists the finalizers Harvester and KubeVirt put on every VM that it lacks.
func missingFinalizers(vm *kubevirtv1.VirtualMachine) []string {
	var out []string
	for _, f := range []string{finalizerHarvesterVM, finalizerKubeVirtVM} {
		if !slices.Contains(vm.Finalizers, f) {
			out = append(out, f)
		}
	}
	return out
}

// recordFailure counts a failed VMI once and sets the back-off before the next start: CrashLoopDelay doubled per
// consecutive failure, at most 16 times it (KubeVirt backs off from 10 s to 5 min).
func recordFailure(prev *kubevirtv1.VirtualMachineStartFailure, vmi *kubevirtv1.VirtualMachineInstance, base time.Duration) *kubevirtv1.VirtualMachineStartFailure {
	if prev != nil && prev.LastFailedVMIUID == vmi.UID {
		return prev
	}
	n := 1
	if prev != nil {
		n = prev.ConsecutiveFailCount + 1
	}
	backoff := base << min(n-1, 4)
	retry := metav1.NewTime(time.Now().Add(backoff))
	return &kubevirtv1.VirtualMachineStartFailure{ConsecutiveFailCount: n, LastFailedVMIUID: vmi.UID, RetryAfterTimestamp: &retry}
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
