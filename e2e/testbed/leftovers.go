package testbed

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Leftovers lists the machine objects still in namespace ns — VMs, VMIs, Secrets (service-account tokens
// aside), PVCs and the node driver's ConfigMaps (static-address allocations) — as "Kind name", waiting up to grace for them to go: the stand-in deletes PVCs while their
// VM is being deleted, and their protection finalizer goes after that.
func (b *Bed) Leftovers(ctx context.Context, ns string, grace time.Duration) ([]string, error) {
	deadline := time.Now().Add(grace)
	for {
		left, err := b.leftovers(ctx, ns)
		if err != nil || len(left) == 0 || time.Now().After(deadline) {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// leftovers lists, once, the objects of each kind Leftovers looks for.
func (b *Bed) leftovers(ctx context.Context, ns string) ([]string, error) {
	opts := metav1.ListOptions{}
	kinds := []struct {
		kind string
		list func() (runtime.Object, error)
	}{
		{"VM", func() (runtime.Object, error) { return b.Virt.KubevirtV1().VirtualMachines(ns).List(ctx, opts) }},
		{"VMI", func() (runtime.Object, error) { return b.Virt.KubevirtV1().VirtualMachineInstances(ns).List(ctx, opts) }},
		{"Secret", func() (runtime.Object, error) { return b.Kube.CoreV1().Secrets(ns).List(ctx, opts) }},
		{"PVC", func() (runtime.Object, error) { return b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts) }},
		{"ConfigMap", func() (runtime.Object, error) {
			return b.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "harvesterhci.io/creator=docker-machine-driver-harvester"})
		}},
	}
	var left []string
	for _, k := range kinds {
		list, err := k.list()
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if s, ok := item.(*corev1.Secret); ok && s.Type == corev1.SecretTypeServiceAccountToken {
				continue
			}
			m, err := meta.Accessor(item)
			if err != nil {
				return nil, err
			}
			left = append(left, k.kind+" "+m.GetName())
		}
	}
	return left, nil
}
