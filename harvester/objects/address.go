package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// StaticAddress is the address allocated to a machine's first NIC: a fact of the create (Facts), like the
// claim names.
type StaticAddress struct {
	Address    netip.Prefix // the address with its subnet's prefix length
	MAC        string       // the first NIC's MAC address, which the guest's network-config matches
	Allocation config.Ref   // the ConfigMap that holds the address
}

// AddressPlan is how a create takes the machine's static addresses (--harvester-ip-pool): one from each range of
// the pool, IPv4 first, on the first NIC's VM network, each held by an allocation ConfigMap in the network's
// namespace that names the machine's VM. The pre-flight checks the plan (harvester/ippool's Check, the
// load-balancer pools), the create allocates by it (ippool.Allocate), and the addresses it gives go onto the VM and
// into the network data (Machine.Objects).
type AddressPlan struct {
	// VM is the machine's VM, namespace/name.
	VM config.Ref
	// Network is the first NIC's VM network.
	Network config.Ref
	// Ranges are the pool's range, or its IPv4 and its IPv6 range.
	Ranges []*config.IPPool
	// MAC is the MAC address the first NIC was given; "" when StaticMAC derives it from the address.
	MAC string
	// CreateTimeout is how long the create may take (--harvester-create-timeout): an allocation whose VM does not
	// exist yet is abandoned only after it.
	CreateTimeout time.Duration
}

// PlanAddresses is cfg's AddressPlan; nil without a pool (or without a VM network on the first NIC, which config
// refuses with the pool).
func PlanAddresses(cfg *config.Config) *AddressPlan {
	if cfg.IPPool == nil || len(cfg.NICs) == 0 || cfg.NICs[0].Network == nil {
		return nil
	}
	return &AddressPlan{VM: config.Ref{Namespace: cfg.Namespace, Name: cfg.MachineName}, Network: *cfg.NICs[0].Network,
		Ranges: cfg.IPPools(), MAC: cfg.NICs[0].MACAddress, CreateTimeout: cfg.CreateTimeout}
}

// RangeOf is the range addr, one of the pool's addresses, comes from: the IPv6 range of a dual-stack pool for an
// IPv6 address, else the first.
func (a *AddressPlan) RangeOf(addr netip.Addr) *config.IPPool {
	if len(a.Ranges) > 1 && addr.Is6() {
		return a.Ranges[1]
	}
	return a.Ranges[0]
}

// Static is the StaticAddress of addr, on the MAC address the user gave the first NIC, else on StaticMAC's. The
// IPv6 address of a dual-stack pool takes v4's MAC address (the IPv4 one's; nil for the first address), since
// both are the one NIC's.
func (a *AddressPlan) Static(addr netip.Addr, v4 *StaticAddress) *StaticAddress {
	mac := a.MAC
	switch {
	case v4 != nil:
		mac = v4.MAC
	case mac == "":
		mac = StaticMAC(a.Network, addr)
	}
	return &StaticAddress{
		Address:    netip.PrefixFrom(addr, a.RangeOf(addr).Subnet.Bits()),
		MAC:        mac,
		Allocation: config.Ref{Namespace: a.Network.Namespace, Name: AllocationName(a.Network, addr)},
	}
}

// First is the StaticAddress of each range's first address, as render shows them.
func (a *AddressPlan) First() []*StaticAddress {
	var out []*StaticAddress
	for _, r := range a.Ranges {
		var v4 *StaticAddress
		if len(out) > 0 {
			v4 = out[0]
		}
		out = append(out, a.Static(r.FirstFree(), v4))
	}
	return out
}

// StaticMAC derives the MAC address of a NIC with address addr on network: locally administered and unicast
// (first octet xxxxxx10), and the same for the same address on the same network, so neighbours' ARP and NDP
// caches stay right when an address passes to another machine. For IPv4 the last four octets are the address
// itself, so two addresses of one network never share a MAC; the rest is a hash of the network (and, for IPv6,
// of the address).
func StaticMAC(network config.Ref, addr netip.Addr) string {
	h := sha256.Sum256([]byte(network.String() + "/" + addr.String()))
	mac := net.HardwareAddr(h[:6])
	if addr.Is4() {
		n := sha256.Sum256([]byte(network.String()))
		a := addr.As4()
		mac = net.HardwareAddr{n[0], n[1], a[0], a[1], a[2], a[3]}
	}
	mac[0] = mac[0]&0xfc | 0x02
	return mac.String()
}

// AllocationName names the ConfigMap that holds addr on network: ip-<network>-<address>, with the address's
// dots or colons as dashes (IPv6 written out in full, so the name never ends in a dash). A name too long for a
// ConfigMap has the network's name hashed instead.
func AllocationName(network config.Ref, addr netip.Addr) string {
	a := addr.String()
	if addr.Is6() {
		a = addr.StringExpanded()
	}
	a = strings.NewReplacer(".", "-", ":", "-").Replace(a)
	name := "ip-" + network.Name + "-" + a
	if len(name) > 253 {
		h := sha256.Sum256([]byte(network.Name))
		name = "ip-" + hex.EncodeToString(h[:5]) + "-" + a
	}
	return name
}

// networkData is the network-config the machine boots with: user, the user's, with the first NIC's static
// addresses of plan added (see networkconfig.AddStatic for the precedence); user itself without.
func networkData(user []byte, plan *AddressPlan, addrs []*StaticAddress) ([]byte, error) {
	if plan == nil || len(addrs) == 0 {
		return user, nil
	}
	pool := plan.Ranges[0]
	static := networkconfig.Static{ID: config.PrimaryNIC, MAC: addrs[0].MAC, Addresses: []netip.Prefix{addrs[0].Address},
		Nameservers: pool.DNS, Search: pool.Search}
	if pool.Gateway.IsValid() {
		static.Gateways = []netip.Addr{pool.Gateway}
	}
	if len(addrs) > 1 && len(plan.Ranges) > 1 { // a dual-stack pool's IPv6 address
		static.Addresses = append(static.Addresses, addrs[1].Address)
		if gw := plan.Ranges[1].Gateway; gw.IsValid() {
			static.Gateways = append(static.Gateways, gw)
		}
	}
	out, err := networkconfig.AddStatic(user, static)
	if err != nil {
		var p config.Problems
		p.AddStaticConflict(err)
		return nil, p.Err()
	}
	return out, nil
}

// applyStaticAddress gives the VM's first interface the MAC address the network-config matches of addrs, the
// machine's static addresses, points the cloud-init disk at the network data, and names the allocations on the
// VM and its VMIs. These parts are the driver's: no VM patch changes them (ownedParts), so they are set on the
// patched VM.
func applyStaticAddress(vm *kubevirtv1.VirtualMachine, addrs []*StaticAddress) {
	if len(addrs) == 0 {
		return
	}
	s := addrs[0]
	spec := &vm.Spec.Template.Spec
	for i := range spec.Domain.Devices.Interfaces {
		if iface := &spec.Domain.Devices.Interfaces[i]; iface.Name == config.PrimaryNIC {
			iface.MacAddress = s.MAC
		}
	}
	for _, v := range spec.Volumes {
		if v.CloudInitNoCloud != nil {
			v.CloudInitNoCloud.NetworkDataSecretRef = v.CloudInitNoCloud.UserDataSecretRef
		}
	}
	refs := s.Allocation.String()
	if len(addrs) > 1 {
		refs += "," + addrs[1].Allocation.String()
	}
	vm.Annotations[config.AnnotationIPAllocation] = refs
	vm.Spec.Template.ObjectMeta.Annotations[config.AnnotationIPAllocation] = refs
}

// renderNetworkData is the network data render shows: for a pool, with addrs (each range's first, see
// AddressPlan.First) and a comment saying so.
func renderNetworkData(user []byte, plan *AddressPlan, addrs []*StaticAddress) ([]byte, error) {
	if plan == nil {
		return user, nil
	}
	note := fmt.Sprintf("# The address is allocated at create from %s; shown: the range's first.\n", plan.Ranges[0])
	if len(plan.Ranges) > 1 {
		note = fmt.Sprintf("# The addresses are allocated at create from %s and %s; shown: each range's first.\n", plan.Ranges[0], plan.Ranges[1])
	}
	out, err := networkData(user, plan, addrs)
	if err != nil {
		return nil, err
	}
	return append([]byte(note), out...), nil
}

// Allocation returns the ConfigMap that holds address s for the plan's machine: created, never updated, to take
// the address (the API server lets only one create of a name succeed). It records the machine, the id of the
// create that makes it (createID; when that create's answer is lost, the id tells its allocation from another's)
// and, for a create in flight, how long it may take before its allocation counts as abandoned (lifetime, from the
// ConfigMap's creationTimestamp).
func (a *AddressPlan) Allocation(s *StaticAddress, lifetime time.Duration, createID string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.Allocation.Name,
			Namespace: s.Allocation.Namespace,
			Labels: map[string]string{
				config.LabelCreator:       config.CreatorName,
				config.LabelIPNetwork:     config.LabelValue(a.Network.Name),
				config.LabelIPVMNamespace: config.LabelValue(a.VM.Namespace),
				config.LabelIPVMName:      config.LabelValue(a.VM.Name),
			},
			Annotations: map[string]string{
				config.AnnotationIPAddress:  s.Address.String(),
				config.AnnotationIPPool:     a.RangeOf(s.Address.Addr()).String(),
				config.AnnotationIPVM:       a.VM.String(),
				config.AnnotationIPLifetime: strconv.Itoa(int(lifetime.Seconds())),
			},
		},
	}
	if createID != "" {
		cm.Annotations[config.AnnotationCreateID] = createID
	}
	return cm
}
