package standin

import (
	"context"
	"fmt"

	"go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// leasedAddresses puts on ifaces (the VMI's interfaces, in spec order) the addresses Harvester's managed DHCP
// leased the NICs the network data doc asks DHCP for by MAC address: the guest's DHCP client gets them from the
// controller's agent, which serves what the VM's VirtualMachineNetworkConfig records (ManagedDHCP). A NIC without
// a lease yet has no address: its DHCP client has had no answer. Without such a NIC nothing is read.
func (s *StandIn) leasedAddresses(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, doc []byte, ifaces []kubevirtv1.VirtualMachineInstanceNetworkInterface) error {
	macs := make([]string, len(ifaces))
	for i, iface := range ifaces {
		macs[i] = iface.MAC
	}
	nics := DHCPNICs(doc, macs)
	if len(nics) == 0 {
		return nil
	}
	cfg, err := s.dyn.Resource(vmnetcfgsGVR).Namespace(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	leases := map[string]string{}
	if err == nil {
		statuses, _, _ := unstructured.NestedSlice(cfg.Object, "status", "networkConfigs")
		for _, st := range statuses {
			if m, _ := st.(map[string]any); m["state"] == "Allocated" {
				leases[fmt.Sprint(m["macAddress"])] = fmt.Sprint(m["allocatedIPAddress"])
			}
		}
	}
	for _, i := range nics {
		ifaces[i].IP, ifaces[i].IPs = "", nil
		for mac, addr := range leases {
			if sameMAC(mac, ifaces[i].MAC) {
				ifaces[i].IP, ifaces[i].IPs = addr, []string{addr}
			}
		}
	}
	return nil
}

// DHCPNICs reads a cloud-init network-config version 2 as a guest applies it to NICs whose MAC addresses are macs:
// the indexes of the NICs an entry matched by MAC address gives dhcp4: true.
func DHCPNICs(doc []byte, macs []string) []int {
	var top struct {
		Network *struct {
			Version   int                       `yaml:"version"`
			Ethernets map[string]map[string]any `yaml:"ethernets"`
		} `yaml:"network"`
		Version   int                       `yaml:"version"`
		Ethernets map[string]map[string]any `yaml:"ethernets"`
	}
	if yaml.Unmarshal(doc, &top) != nil {
		return nil
	}
	version, ethernets := top.Version, top.Ethernets
	if top.Network != nil {
		version, ethernets = top.Network.Version, top.Network.Ethernets
	}
	if version != 2 {
		return nil
	}
	var out []int
	for _, e := range ethernets {
		match, _ := e["match"].(map[string]any)
		mac, _ := match["macaddress"].(string)
		if dhcp, _ := e["dhcp4"].(bool); !dhcp || mac == "" {
			continue
		}
		for i, m := range macs {
			if sameMAC(m, mac) {
				out = append(out, i)
			}
		}
	}
	return out
}
