package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The VM and VMI clients through the Client's Screen (screen_client.go): what they return is screened.

// screenedKubevirt is KubevirtInterface through a Screen.
type screenedKubevirt struct {
	next KubevirtInterface
	s    *Screen
}

func (k screenedKubevirt) VirtualMachines(ns string) VirtualMachineInterface {
	next := k.next.VirtualMachines(ns)
	return screenedVMs{screenedObjects[*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineList]{next, k.s}, next}
}

func (k screenedKubevirt) VirtualMachineInstances(ns string) VirtualMachineInstanceInterface {
	return screenedObjects[*kubevirtv1.VirtualMachineInstance, *kubevirtv1.VirtualMachineInstanceList]{k.next.VirtualMachineInstances(ns), k.s}
}

// objectClient is what the VM and VMI clients share (VirtualMachineInstanceInterface is all of it).
type objectClient[T, L runtime.Object] interface {
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// screenedObjects is an objectClient through a Screen.
type screenedObjects[T, L runtime.Object] struct {
	next objectClient[T, L]
	s    *Screen
}

func (c screenedObjects[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.s.Err(c.next.Delete(ctx, name, opts))
}

func (c screenedObjects[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out, err := c.next.Get(ctx, name, opts)
	return screened(c.s, out, err)
}

func (c screenedObjects[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out, err := c.next.List(ctx, opts)
	return screened(c.s, out, err)
}

func (c screenedObjects[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.next.Watch(ctx, opts)
	return c.s.watched(w, err, false)
}

func (c screenedObjects[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (T, error) {
	out, err := c.next.Patch(ctx, name, pt, data, opts, sub...)
	return screened(c.s, out, err)
}

// screenedVMs adds the VM client's own methods.
type screenedVMs struct {
	screenedObjects[*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineList]
	vms VirtualMachineInterface
}

func (c screenedVMs) Create(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.CreateOptions) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.vms.Create(ctx, vm, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) Update(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.UpdateOptions) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.vms.Update(ctx, vm, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) Stop(ctx context.Context, name string, opts *kubevirtv1.StopOptions) error {
	return c.s.Err(c.vms.Stop(ctx, name, opts))
}
