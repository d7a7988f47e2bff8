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

// StaticAddressFor is the StaticAddress of addr from cfg's pool (the range of addr's family): on the MAC address
// the user gave the first NIC, else on StaticMAC's. The IPv6 address of a dual-stack pool takes the MAC address of
// the IPv4 one (see DualStatic).
func StaticAddressFor(cfg *config.Config, addr netip.Addr) *StaticAddress {
	network := *cfg.NICs[0].Network
	mac := cfg.NICs[0].MACAddress
	if mac == "" {
		mac = StaticMAC(network, addr)
	}
	return &StaticAddress{
		Address:    netip.PrefixFrom(addr, cfg.IPPoolOf(addr).Subnet.Bits()),
		MAC:        mac,
		Allocation: config.Ref{Namespace: network.Namespace, Name: AllocationName(network, addr)},
	}
}

// DualStatic is the StaticAddress of IPv6 address addr of a dual-stack pool, beside v4, the IPv4 one: on v4's
// MAC address, since both are the one NIC's.
func DualStatic(cfg *config.Config, v4 *StaticAddress, addr netip.Addr) *StaticAddress {
	s := StaticAddressFor(cfg, addr)
	s.MAC = v4.MAC
	return s
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

// NetworkData is the network-config the machine boots with: the user's, with the first NIC's static address
// added when it has one (see networkconfig.AddStatic for the precedence).
func NetworkData(cfg *config.Config, facts Facts) ([]byte, error) {
	if facts.Lease != nil {
		return leaseNetworkData(cfg, facts.Lease)
	}
	s := facts.StaticAddress
	if s == nil {
		return cfg.NetworkData, nil
	}
	static := networkconfig.Static{ID: config.PrimaryNIC, MAC: s.MAC, Addresses: []netip.Prefix{s.Address},
		Nameservers: cfg.IPPool.DNS, Search: cfg.IPPool.Search}
	if cfg.IPPool.Gateway.IsValid() {
		static.Gateways = []netip.Addr{cfg.IPPool.Gateway}
	}
	if s6, pool6 := facts.StaticAddress6, cfg.IPPool6; s6 != nil && pool6 != nil { // a dual-stack pool's IPv6 address
		static.Addresses = append(static.Addresses, s6.Address)
		if pool6.Gateway.IsValid() {
			static.Gateways = append(static.Gateways, pool6.Gateway)
		}
	}
	out, err := networkconfig.AddStatic(cfg.NetworkData, static)
	if err != nil {
		var p config.Problems
		p.AddStaticConflict(err)
		return nil, p.Err()
	}
	return out, nil
}

// applyStaticAddress gives the VM's first interface the MAC address the network-config matches, points the
// cloud-init disk at the network data, and names the allocation on the VM and its VMIs.
func applyStaticAddress(vm *kubevirtv1.VirtualMachine, facts Facts) {
	s := facts.StaticAddress
	if s == nil {
		return
	}
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
	if s6 := facts.StaticAddress6; s6 != nil {
		refs += "," + s6.Allocation.String()
	}
	vm.Annotations[config.AnnotationIPAllocation] = refs
	vm.Spec.Template.ObjectMeta.Annotations[config.AnnotationIPAllocation] = refs
}

// renderNetworkData is the network data render shows: for a pool, with the address of facts (the range's first,
// see renderFacts) and a comment saying so; for a lease, its DHCP entry and a comment saying where the address
// comes from.
func renderNetworkData(cfg *config.Config, facts Facts) ([]byte, error) {
	if l := facts.Lease; l != nil {
		out, err := leaseNetworkData(cfg, l)
		return append([]byte(leaseNote(l)), out...), err
	}
	if cfg.IPPool == nil {
		return cfg.NetworkData, nil
	}
	note := fmt.Sprintf("# The address is allocated at create from %s; shown: the range's first.\n", cfg.IPPool)
	if v6 := cfg.IPPool6; v6 != nil {
		note = fmt.Sprintf("# The addresses are allocated at create from %s and %s; shown: each range's first.\n", cfg.IPPool, v6)
	}
	out, err := NetworkData(cfg, facts)
	if err != nil {
		return nil, err
	}
	return append([]byte(note), out...), nil
}

// Allocation returns the ConfigMap that holds address s for cfg's machine: created, never updated, to take
// the address (the API server lets only one create of a name succeed). It records the machine, the id of the
// create that makes it (createID; when that create's answer is lost, the id tells its allocation from another's)
// and, for a create in flight, how long it may take before its allocation counts as abandoned (lifetime, from the
// ConfigMap's creationTimestamp).
func Allocation(cfg *config.Config, s *StaticAddress, lifetime time.Duration, createID string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.Allocation.Name,
			Namespace: s.Allocation.Namespace,
			Labels: map[string]string{
				config.LabelCreator:       config.CreatorName,
				config.LabelIPNetwork:     config.LabelValue(cfg.NICs[0].Network.Name),
				config.LabelIPVMNamespace: config.LabelValue(cfg.Namespace),
				config.LabelIPVMName:      config.LabelValue(cfg.MachineName),
			},
			Annotations: map[string]string{
				config.AnnotationIPAddress:  s.Address.String(),
				config.AnnotationIPPool:     cfg.IPPoolOf(s.Address.Addr()).String(),
				config.AnnotationIPVM:       config.Ref{Namespace: cfg.Namespace, Name: cfg.MachineName}.String(),
				config.AnnotationIPLifetime: strconv.Itoa(int(lifetime.Seconds())),
			},
		},
	}
	if createID != "" {
		cm.Annotations[config.AnnotationCreateID] = createID
	}
	return cm
}
