package admission_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Harvester's own mutator, through its webhook, stores a VM as Harvester stores it, with the bed's default
// Settings (overcommit-config {"cpu":1000,"memory":150}, additional-guest-memory-overhead-ratio 1.5, grace
// period 120): requests from the limits, guest memory, one socket at most, the VM network's cluster network as a
// node requirement, a MAC address per interface, the grace period. Each value here is what
// pkg/webhook/resources/virtualmachine/mutator.go computes for limits of 2 CPUs and 4Gi.
func TestHarvesterMutatesVM(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	vm := newVM(b, ns, "mutated")
	vm.Spec.Template.Spec.Domain.Resources.Limits = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	got, err := b.Virt.KubevirtV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := got.Spec.Template.Spec
	req := spec.Domain.Resources.Requests
	if q := req[corev1.ResourceCPU]; q.String() != "200m" { // 2000m × 100 / 1000
		t.Errorf("requests.cpu %s, want 200m", &q)
	}
	if q := req[corev1.ResourceMemory]; q.Value() != 2730<<20 { // 4Gi × 100 / 150, truncated to MiB
		t.Errorf("requests.memory %s, want 2730Mi", &q)
	}
	// With an additional-guest-memory-overhead-ratio and no reserved-memory annotation nothing is reserved.
	if spec.Domain.Memory == nil || spec.Domain.Memory.Guest == nil || spec.Domain.Memory.Guest.Value() != 4<<30 {
		t.Errorf("memory %+v, want guest 4Gi", spec.Domain.Memory)
	}
	if spec.Domain.CPU == nil || spec.Domain.CPU.MaxSockets != 1 || spec.Domain.CPU.Sockets != 1 || spec.Domain.CPU.Threads != 1 {
		t.Errorf("cpu %+v, want maxSockets, sockets and threads 1", spec.Domain.CPU)
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != 120 {
		t.Errorf("terminationGracePeriodSeconds %v, want 120", spec.TerminationGracePeriodSeconds)
	}
	if mac := spec.Domain.Devices.Interfaces[0].MacAddress; mac == "" {
		t.Error("no MAC address on nic-0")
	}
	aff := spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		len(aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) != 1 ||
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key != "network.harvesterhci.io/mgmt" {
		t.Errorf("affinity %+v, want a required node term on network.harvesterhci.io/mgmt", aff)
	}
}
