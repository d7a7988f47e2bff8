package testbed

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	watchtools "k8s.io/client-go/tools/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/await"
)

// DefaultWait bounds the Wait helpers when ctx has no deadline of its own.
const DefaultWait = time.Minute

// WaitVM watches VM namespace/name until cond holds (exists=false while there is none) and returns it.
func (b *Bed) WaitVM(ctx context.Context, namespace, name, what string, cond func(vm *kubevirtv1.VirtualMachine, exists bool) bool) (*kubevirtv1.VirtualMachine, error) {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, deadline(ctx))
	defer cancel()
	api := b.Virt.KubevirtV1().VirtualMachines(namespace)
	return await.Object(ctx, await.ByName(name, api.List, api.Watch), fmt.Sprintf("VM %s/%s: %s", namespace, name, what), cond, DescribeVM)
}

// WaitVMI watches VMI namespace/name until cond holds and returns it.
func (b *Bed) WaitVMI(ctx context.Context, namespace, name, what string, cond func(vmi *kubevirtv1.VirtualMachineInstance, exists bool) bool) (*kubevirtv1.VirtualMachineInstance, error) {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, deadline(ctx))
	defer cancel()
	api := b.Virt.KubevirtV1().VirtualMachineInstances(namespace)
	return await.Object(ctx, await.ByName(name, api.List, api.Watch), fmt.Sprintf("VMI %s/%s: %s", namespace, name, what), cond, DescribeVMI)
}

// WaitPVC watches PVC namespace/name until cond holds and returns it.
func (b *Bed) WaitPVC(ctx context.Context, namespace, name, what string, cond func(pvc *corev1.PersistentVolumeClaim, exists bool) bool) (*corev1.PersistentVolumeClaim, error) {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, deadline(ctx))
	defer cancel()
	api := b.Kube.CoreV1().PersistentVolumeClaims(namespace)
	return await.Object(ctx, await.ByName(name, api.List, api.Watch), fmt.Sprintf("PVC %s/%s: %s", namespace, name, what), cond,
		func(p *corev1.PersistentVolumeClaim) string {
			return fmt.Sprintf("phase %q, deleting %v, finalizers %v", p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers)
		})
}

// Gone is a condition for the Wait helpers: the object no longer exists.
func Gone[T any](_ T, exists bool) bool { return !exists }

// DescribeVM summarises a VM for wait errors.
func DescribeVM(vm *kubevirtv1.VirtualMachine) string {
	rs := "<unset>"
	if r, err := vm.RunStrategy(); err == nil {
		rs = string(r)
	}
	return fmt.Sprintf("printableStatus %q, ready %v, created %v, runStrategy %s, deleting %v, finalizers %v, conditions %s",
		vm.Status.PrintableStatus, vm.Status.Ready, vm.Status.Created, rs, vm.DeletionTimestamp != nil, vm.Finalizers, vmConditions(vm))
}

// DescribeVMI summarises a VMI for wait errors.
func DescribeVMI(vmi *kubevirtv1.VirtualMachineInstance) string {
	var conds, ifaces []string
	for _, c := range vmi.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	for _, i := range vmi.Status.Interfaces {
		ifaces = append(ifaces, fmt.Sprintf("%s:%v[%s]", i.Name, i.IPs, i.InfoSource))
	}
	return fmt.Sprintf("uid %s, phase %q, node %q, deleting %v, conditions %v, interfaces %v",
		vmi.UID, vmi.Status.Phase, vmi.Status.NodeName, vmi.DeletionTimestamp != nil, conds, ifaces)
}

func vmConditions(vm *kubevirtv1.VirtualMachine) []string {
	var out []string
	for _, c := range vm.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return out
}

func deadline(ctx context.Context) time.Duration {
	if _, ok := ctx.Deadline(); ok {
		return 0
	}
	return DefaultWait
}
