package objects

import (
	"crypto/sha256"
	"net"
	"net/netip"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// LeasePlan is how a create takes the first NIC's address from an IPPool of Harvester's managed DHCP
// (--harvester-ip-pool-name): the create makes the VM with the MAC address LeaseMAC derives for it, the
// vm-dhcp-controller leases that MAC a free address of the pool once the VM exists, and the create then pins the
// lease to the VM (PinnedLease). The guest asks for the address by DHCP on that MAC. The pre-flight checks the
// plan (harvester/iplease's Check, the load-balancer pools), and the controller releases the lease when the VM
// goes.
type LeasePlan struct {
	// Pool is the IPPool.
	Pool config.Ref
	// VM is the machine's VM, namespace/name.
	VM config.Ref
	// Network is the first NIC's VM network, which the IPPool must serve.
	Network config.Ref
}

// PlanLease is cfg's LeasePlan; nil without --harvester-ip-pool-name (or without a VM network on the first NIC,
// which config refuses with it).
func PlanLease(cfg *config.Config) *LeasePlan {
	if cfg.LeasePool == nil || len(cfg.NICs) == 0 || cfg.NICs[0].Network == nil {
		return nil
	}
	return &LeasePlan{Pool: *cfg.LeasePool, VM: config.Ref{Namespace: cfg.Namespace, Name: cfg.MachineName}, Network: *cfg.NICs[0].Network}
}

// MAC is the first NIC's MAC address the create whose id is createID gives it (LeaseMAC).
func (l *LeasePlan) MAC(createID string) string { return LeaseMAC(l.Network, l.VM, createID) }

// LeaseMAC is the MAC address of the first NIC of the machine, the one the lease is bound to: the one its create
// derives (LeasePlan.MAC, from the create's id; a draft's, as render shows it, from none); "" without a lease.
func (m *Machine) LeaseMAC() string {
	if m.Lease == nil {
		return ""
	}
	return m.Lease.MAC(m.draw.CreateID)
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

// applyLease gives the VM's first interface mac, the MAC address the lease of plan is bound to, and names the
// IPPool on the VM. These parts are the driver's: no VM patch changes them (ownedParts), so they are set on the
// patched VM, as a static address is (applyStaticAddress). Build already pointed the cloud-init disk at the network
// data, which holds the first NIC's DHCP entry.
func applyLease(vm *kubevirtv1.VirtualMachine, plan *LeasePlan, mac string) {
	if plan == nil {
		return
	}
	spec := &vm.Spec.Template.Spec
	for i := range spec.Domain.Devices.Interfaces {
		if iface := &spec.Domain.Devices.Interfaces[i]; iface.Name == config.PrimaryNIC {
			iface.MacAddress = mac
		}
	}
	vm.Annotations[config.AnnotationIPLeasePool] = plan.Pool.String()
}

// leaseNetworkData is the network data of a machine with a lease: user, the user's, with the first NIC's DHCP
// entry for mac added (see networkconfig.AddStatic for the precedence).
func leaseNetworkData(user []byte, mac string) ([]byte, error) {
	out, err := networkconfig.AddStatic(user, networkconfig.Static{ID: config.PrimaryNIC, MAC: mac, DHCP4: true})
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
