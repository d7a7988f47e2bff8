package standin_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
)

var subnetsGVR = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}

// A VM on an overlay network is stored with Harvester's managedtap binding in place of its bridge (Harvester's
// mutator, once the Subnet has DHCP on), admitted by KubeVirt, and its guest agent reports an address of the
// Subnet, as on a bridge network; a NIC on an overlay network without a Subnet gets none, while the VM's bridge NIC
// keeps its DHCP address.
func TestOverlayNICGetsSubnetAddress(t *testing.T) {
	bed, ns, ctx := setup(t)
	vm := vmspec.VM(ns, "vm1", "default/"+fixtures.OverlayVMs, ubuntu(bed))
	spec := &vm.Spec.Template.Spec
	spec.Domain.Devices.Interfaces = append(spec.Domain.Devices.Interfaces,
		kubevirtv1.Interface{Name: "nic-1", Model: "virtio", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}},
		kubevirtv1.Interface{Name: "nic-2", Model: "virtio", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}})
	spec.Networks = append(spec.Networks,
		kubevirtv1.Network{Name: "nic-1", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "default/" + fixtures.OverlayNoSubnet}}},
		kubevirtv1.Network{Name: "nic-2", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "default/vlan100"}}})
	stored := create(t, ctx, bed, vm)

	ifaces := stored.Spec.Template.Spec.Domain.Devices.Interfaces
	if b := ifaces[0].Binding; b == nil || b.Name != "managedtap" || ifaces[0].Bridge != nil {
		t.Errorf("nic-0 on the overlay network stored as %+v, want Harvester's managedtap binding and no bridge", ifaces[0].InterfaceBindingMethod)
	}
	for _, i := range ifaces[1:] {
		if i.Bridge == nil || i.Binding != nil {
			t.Errorf("%s stored as %+v, want its bridge (no Subnet with DHCP, or no overlay)", i.Name, i.InterfaceBindingMethod)
		}
	}

	vmi, err := bed.WaitVMI(ctx, ns, "vm1", "running with the guest agent's addresses", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && condition(vmi, kubevirtv1.VirtualMachineInstanceAgentConnected) == corev1.ConditionTrue && len(vmi.Status.Interfaces) == 3
	})
	if err != nil {
		t.Fatal(err)
	}
	subnet, err := bed.Dynamic.Resource(subnetsGVR).Get(ctx, fixtures.OverlayVMs+"-subnet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, ok := standin.OverlayAddress(subnet, ns, "vm1", 0)
	got := vmi.Status.Interfaces
	if !ok || got[0].IP != want || !netip.MustParsePrefix("172.20.10.0/24").Contains(netip.MustParseAddr(got[0].IP)) || len(got[0].IPs) != 1 {
		t.Errorf("nic-0 reports %q %v, want %s of the Subnet 172.20.10.0/24 alone", got[0].IP, got[0].IPs, want)
	}
	if got[1].IP != "" || len(got[1].IPs) != 0 {
		t.Errorf("nic-1, on an overlay network without a Subnet, reports %q %v; want no address", got[1].IP, got[1].IPs)
	}
	if v4, _ := standin.Addresses(ns, "vm1", 2); got[2].IP != v4 {
		t.Errorf("nic-2, on a bridge network, reports %q, want its DHCP address %s", got[2].IP, v4)
	}
}

// The stand-in's overlay address is one a Kube-OVN Subnet can give: inside its CIDR, never the network's or last
// address, nor an excluded one (addresses and first..last ranges); none when every address is excluded.
func TestOverlayAddress(t *testing.T) {
	subnet := func(cidr string, exclude ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"cidrBlock": cidr, "excludeIps": exclude}}}
	}
	if a, ok := standin.OverlayAddress(subnet("172.20.30.0/30", "172.20.30.1"), "ns", "vm", 0); !ok || a != "172.20.30.2" {
		t.Errorf("a /30 less its gateway: %q %v, want its one address 172.20.30.2", a, ok)
	}
	if a, ok := standin.OverlayAddress(subnet("10.0.0.0/29", "10.0.0.1..10.0.0.6"), "ns", "vm", 0); ok {
		t.Errorf("a /29 with all six addresses excluded gave %s", a)
	}
	for i := range 50 {
		a, ok := standin.OverlayAddress(subnet("172.20.10.0/24,fd00::/64", "172.20.10.1", "172.20.10.100..172.20.10.200"), "ns", "vm", i)
		addr, err := netip.ParseAddr(a)
		if !ok || err != nil || !netip.MustParsePrefix("172.20.10.0/24").Contains(addr) || a == "172.20.10.0" || a == "172.20.10.255" || a == "172.20.10.1" ||
			(addr.Compare(netip.MustParseAddr("172.20.10.100")) >= 0 && addr.Compare(netip.MustParseAddr("172.20.10.200")) <= 0) {
			t.Fatalf("NIC %d: %q %v, not a free address of 172.20.10.0/24", i, a, ok)
		}
	}
	if a, ok := standin.OverlayAddress(subnet("fd00:1::/64"), "ns", "vm", 0); !ok || !netip.MustParsePrefix("fd00:1::/64").Contains(netip.MustParseAddr(a)) {
		t.Errorf("an IPv6 /64: %q %v", a, ok)
	}
}
