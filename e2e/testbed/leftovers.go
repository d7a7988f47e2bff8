package testbed

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Leftovers lists the machine objects still in namespace ns — VMs, VMIs, Secrets (service-account tokens
// aside) and PVCs — as "Kind name", waiting up to grace for them to go: the stand-in deletes PVCs while their
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

func (b *Bed) leftovers(ctx context.Context, ns string) ([]string, error) {
	var left []string
	vms, err := b.Virt.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, vm := range vms.Items {
		left = append(left, "VM "+vm.Name)
	}
	vmis, err := b.Virt.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, vmi := range vmis.Items {
		left = append(left, "VMI "+vmi.Name)
	}
	secrets, err := b.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range secrets.Items {
		if s.Type != corev1.SecretTypeServiceAccountToken {
			left = append(left, "Secret "+s.Name)
		}
	}
	pvcs, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pvcs.Items {
		left = append(left, "PVC "+p.Name)
	}
	return left, nil
}
