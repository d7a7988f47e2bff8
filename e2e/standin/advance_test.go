package standin

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kubevirtfake "kubevirt.io/client-go/kubevirt/fake"
)

// What a fault suppresses cannot be shown against the live bed without waiting for something not to happen, so
// the guest step is checked here on one reconcile, with the agent's delay already over.
func TestGuestAgentStep(t *testing.T) {
	cases := []struct {
		inject          string
		agent, withAddr bool
	}{
		{"", true, true},
		{InjectNoAgent, false, false},
		{InjectNoIP, true, false},
	}
	for _, c := range cases {
		t.Run("inject="+c.inject, func(t *testing.T) {
			vm, vmi := runningVM(c.inject)
			s := &StandIn{opts: Options{}.withDefaults(), clocks: map[types.UID]map[string]time.Time{},
				virt: kubevirtfake.NewSimpleClientset(vmi), pvcs: corelisters.NewPersistentVolumeClaimLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)),
				namespaces: corelisters.NewNamespaceLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil))}
			got, _, err := s.advanceVMI(context.Background(), vm, vmi)
			if err != nil {
				t.Fatal(err)
			}
			agent := conditionOf(got, kubevirtv1.VirtualMachineInstanceAgentConnected)
			if (agent != nil && agent.Status == corev1.ConditionTrue) != c.agent {
				t.Errorf("AgentConnected %+v, want connected=%v", agent, c.agent)
			}
			if n := len(got.Status.Interfaces); n != 1 {
				t.Fatalf("%d interfaces, want 1", n)
			}
			if addr := got.Status.Interfaces[0].IP != ""; addr != c.withAddr {
				t.Errorf("interface %+v, want an address: %v", got.Status.Interfaces[0], c.withAddr)
			}
		})
	}
}

// runningVM returns a VM (IP delay 0, the given fault) and its Running VMI with one bridge NIC.
func runningVM(inject string) (*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineInstance) {
	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns",
		Annotations: map[string]string{AnnotationInject: inject, AnnotationIPDelay: "0s"}},
		Spec: kubevirtv1.VirtualMachineSpec{RunStrategy: ptr.To(kubevirtv1.RunStrategyAlways)}}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid"},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
			Interfaces: []kubevirtv1.Interface{{Name: "nic-0"}}}}},
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running,
			Interfaces: []kubevirtv1.VirtualMachineInstanceNetworkInterface{{Name: "nic-0", MAC: "52:54:00:00:00:01", InfoSource: infoSourceDomain}}}}
	return vm, vmi
}
