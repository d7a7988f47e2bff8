package standin

import (
	"fmt"
	"hash/fnv"

	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Interface info sources as KubeVirt reports them (VirtualMachineInstanceNetworkInterface.InfoSource).
const (
	infoSourceDomain      = "domain"
	infoSourceDomainAgent = "domain, guest-agent"
)

// interfaces is status.interfaces for the VMI's NICs, in spec order. Before the guest agent connects only the
// domain is known (name, MAC). With the agent come the guest's interface name and, when withIP, its addresses:
// bridge NICs on VM networks get addresses only from the agent (kubevirt/kubevirt
// pkg/network/setup/netstat.go: the domain gives name and MAC, the guest agent the addresses).
func interfaces(vmi *kubevirtv1.VirtualMachineInstance, agent, withIP bool) []kubevirtv1.VirtualMachineInstanceNetworkInterface {
	var out []kubevirtv1.VirtualMachineInstanceNetworkInterface
	for i, nic := range vmi.Spec.Domain.Devices.Interfaces {
		mac := nic.MacAddress
		if mac == "" {
			mac = MAC(vmi.Namespace, vmi.Name, i)
		}
		s := kubevirtv1.VirtualMachineInstanceNetworkInterface{Name: nic.Name, MAC: mac, InfoSource: infoSourceDomain,
			PodInterfaceName: podInterfaceName(vmi, nic.Name)}
		if agent {
			s.InterfaceName = fmt.Sprintf("eth%d", i)
			s.InfoSource = infoSourceDomainAgent
			if withIP {
				v4, v6 := Addresses(vmi.Namespace, vmi.Name, i)
				s.IP, s.IPs = v4, []string{v4, v6}
			}
		}
		out = append(out, s)
	}
	return out
}

// podInterfaceName keeps the pod interface name the VMI's status gives the NIC: KubeVirt's VMI controller
// writes it (pkg/network/controllers/vmi.go UpdateVMIStatus), and
// virt-handler reports the NIC under the same name; dropping it would start a tug of war over the status.
func podInterfaceName(vmi *kubevirtv1.VirtualMachineInstance, nic string) string {
	for _, i := range vmi.Status.Interfaces {
		if i.Name == nic {
			return i.PodInterfaceName
		}
	}
	return ""
}

// Addresses returns the IPv4 and IPv6 address the stand-in reports for NIC i of VM namespace/name when its
// network data gives the NIC no static address (see StaticNICAddresses), as DHCP would: derived from those, so a
// test can predict them (10.0.0.0/8 and fd00:e2e::/32; collisions are possible but rare).
func Addresses(namespace, name string, i int) (ipv4, ipv6 string) {
	h := hash(fmt.Sprintf("%s/%s/%d", namespace, name, i))
	ipv4 = fmt.Sprintf("10.%d.%d.%d", byte(h>>16), byte(h>>8), 2+h%252)
	ipv6 = fmt.Sprintf("fd00:e2e::%x:%x", h>>16, h&0xffff)
	return ipv4, ipv6
}

// MAC returns the MAC address reported for NIC i when the spec sets none (a locally administered QEMU prefix).
func MAC(namespace, name string, i int) string {
	h := hash(fmt.Sprintf("mac/%s/%s/%d", namespace, name, i))
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", byte(h>>16), byte(h>>8), byte(h))
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
