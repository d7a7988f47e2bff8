package standin

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/guest"
)

// The agent's report is merged into the VMI's NICs by MAC, whatever the guest calls its interfaces and in whatever
// order it lists them; a NIC the agent does not report keeps what the domain knows.
func TestAgentInterfacesByMAC(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{
		{Name: "default", MacAddress: "52:54:00:aa:00:01"},
		{Name: "storage", MacAddress: "52:54:00:aa:00:02"},
		{Name: "unreported"},
	}
	reported := []guest.Interface{
		{Name: "lo", MAC: "00:00:00:00:00:00", IPAddresses: []guest.IPAddress{{Type: "ipv4", Address: "127.0.0.1"}}},
		{Name: "enp2s0", MAC: "52:54:00:AA:00:02", IPAddresses: []guest.IPAddress{{Type: "ipv4", Address: "10.0.3.15"}}},
		{Name: "enp1s0", MAC: "52:54:00:aa:00:01", IPAddresses: []guest.IPAddress{
			{Type: "ipv4", Address: "10.0.2.15"}, {Type: "ipv6", Address: "fec0::5054:ff:feaa:1"}}},
	}
	want := []kubevirtv1.VirtualMachineInstanceNetworkInterface{
		{Name: "default", MAC: "52:54:00:aa:00:01", InterfaceName: "enp1s0", InfoSource: infoSourceDomainAgent,
			IP: "10.0.2.15", IPs: []string{"10.0.2.15", "fec0::5054:ff:feaa:1"}},
		{Name: "storage", MAC: "52:54:00:aa:00:02", InterfaceName: "enp2s0", InfoSource: infoSourceDomainAgent,
			IP: "10.0.3.15", IPs: []string{"10.0.3.15"}},
		{Name: "unreported", MAC: MAC("ns", "vm", 2), InfoSource: infoSourceDomain},
	}
	if got := agentInterfaces(vmi, reported); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
