package objects

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// Lease is the first NIC's address leased from an IPPool of Harvester's managed DHCP (--harvester-ip-pool-name):
// a fact of the create, like StaticAddress. The vm-dhcp-controller leases the NIC a free address of the pool once
// the VM exists; the create then pins it (PinnedLease). The guest asks for it by DHCP on the MAC address the
// lease is bound to.
type Lease struct {
	Pool config.Ref // the IPPool
	MAC  string     // the first NIC's MAC address (LeaseMAC)
}

// LeaseFor is the lease of cfg's machine made by the create whose id is createID; nil without
// --harvester-ip-pool-name.
func LeaseFor(cfg *config.Config, createID string) *Lease {
	if cfg.LeasePool == nil || len(cfg.NICs) == 0 || cfg.NICs[0].Network == nil {
		return nil
	}
	vm := config.Ref{Namespace: cfg.Namespace, Name: cfg.MachineName}
	return &Lease{Pool: *cfg.LeasePool, MAC: LeaseMAC(*cfg.NICs[0].Network, vm, createID)}
}

// LeaseMAC derives the MAC address of the first NIC of VM vm on network, made by the create whose id is createID:
// locally administered and unicast (first octet xxxxxx10), the rest a hash of the three. Each create's is its own:
// the vm-dhcp-controller keys a network's leases by MAC address and gives a MAC it knows that MAC's address again
// (pkg/controller/vmnetcfg/controller.go, Allocate), so a later machine of the same name, made while the controller
// still releases the lease of the one before, must not come with the same MAC.
func LeaseMAC(network, vm config.Ref, createID string) string {
	h := sha256.Sum256([]byte(network.String() + "|" + vm.String() + "|" + createID))
	mac := net.HardwareAddr(h[:6])
	mac[0] = mac[0]&0xfc | 0x02
	return mac.String()
}

// applyLease gives the VM's first interface the lease's MAC address, points the cloud-init disk at the network
// data (the first NIC's DHCP entry) and names the IPPool on the VM.
func applyLease(vm *kubevirtv1.VirtualMachine, facts Facts) {
	l := facts.Lease
	if l == nil {
		return
	}
	spec := &vm.Spec.Template.Spec
	for i := range spec.Domain.Devices.Interfaces {
		if iface := &spec.Domain.Devices.Interfaces[i]; iface.Name == config.PrimaryNIC {
			iface.MacAddress = l.MAC
		}
	}
	for _, v := range spec.Volumes {
		if v.CloudInitNoCloud != nil {
			v.CloudInitNoCloud.NetworkDataSecretRef = v.CloudInitNoCloud.UserDataSecretRef
		}
	}
	vm.Annotations[config.AnnotationIPLeasePool] = l.Pool.String()
}

// leaseNetworkData is the network data of a machine with a lease: the user's, with the first NIC's DHCP entry
// added (see networkconfig.AddStatic for the precedence).
func leaseNetworkData(cfg *config.Config, l *Lease) ([]byte, error) {
	out, err := networkconfig.AddStatic(cfg.NetworkData, networkconfig.Static{ID: config.PrimaryNIC, MAC: l.MAC, DHCP4: true})
	if err != nil {
		var p config.Problems
		p.AddLeaseConflict(err)
		return nil, p.Err()
	}
	return out, nil
}

// PinnedLease is the annotation that pins the first NIC's lease to addr, the address the vm-dhcp-controller
// leased it: from then on the controller keeps that address for the NIC, should its MAC address change
// (harvester/vm-dhcp-controller#157). The create sets it on the VM once the lease is made.
func PinnedLease(addr netip.Addr) map[string]string {
	return map[string]string{config.AnnotationStaticIP: addr.String()}
}

// PinLease is vm with its lease pinned to addr (PinnedLease), as the create leaves it.
func PinLease(vm *kubevirtv1.VirtualMachine, addr netip.Addr) *kubevirtv1.VirtualMachine {
	out := vm.DeepCopy()
	for k, v := range PinnedLease(addr) {
		out.Annotations[k] = v
	}
	return out
}

// leaseNote is the comment render puts above a leased machine's network data.
func leaseNote(l *Lease) string {
	return fmt.Sprintf("# The address is leased at create from IPPool %s of Harvester's managed DHCP and pinned to the VM; the guest takes it by DHCP.\n"+
		"# The MAC address shown is derived anew for each create.\n", l.Pool)
}
