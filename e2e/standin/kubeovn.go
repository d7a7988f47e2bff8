package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Kube-OVN's part: the address a guest's NIC on an overlay network gets. Kube-OVN's controller allocates it from
// the network's Subnet when the virt-launcher Pod is made, and answers the guest's DHCP with it when the Subnet
// has enableDHCP (Harvester's mutator then binds the NIC as managedtap, so the answer reaches the guest); the guest
// agent reports it as on a bridge network. The stand-in keeps no allocations: it derives the address from the VMI
// and the Subnet (OverlayAddress), and does not count it in the Subnet's status, which stays as seeded.

var (
	nadResource    = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	subnetResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}
)

// kubeOVN holds the informers of the networks and Subnets the stand-in reads on every VMI update: a lookup in a
// cache, not a request.
type kubeOVN struct {
	nads, subnets cache.SharedIndexInformer
}

// startKubeOVN starts the informers of NetworkAttachmentDefinitions and Subnets, running until ctx ends, and waits
// until they have synced (or startup ends).
func (s *StandIn) startKubeOVN(ctx, startup context.Context) error {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(s.dyn, 0)
	s.ovn = kubeOVN{nads: factory.ForResource(nadResource).Informer(), subnets: factory.ForResource(subnetResource).Informer()}
	factory.Start(ctx.Done())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		factory.Shutdown()
	}()
	for gvr, ok := range factory.WaitForCacheSync(startup.Done()) {
		if !ok {
			return fmt.Errorf("stand-in: %s cache did not sync: %w", gvr.Resource, startup.Err())
		}
	}
	return nil
}

// overlayAddresses sets, on ifaces (the VMI's interfaces, in spec order), the address of each NIC on a Kube-OVN
// network as Kube-OVN would give it: from the network's Subnet when that has DHCP on, else none (the guest's DHCP
// goes unanswered). NICs on other networks keep theirs.
func (s *StandIn) overlayAddresses(vmi *kubevirtv1.VirtualMachineInstance, ifaces []kubevirtv1.VirtualMachineInstanceNetworkInterface) {
	networks := map[string]string{} // NIC name -> namespace/name of its Multus network
	for _, n := range vmi.Spec.Networks {
		if n.Multus != nil {
			networks[n.Name] = n.Multus.NetworkName
		}
	}
	for i, iface := range vmi.Spec.Domain.Devices.Interfaces {
		ref, ok := networks[iface.Name]
		if !ok || i >= len(ifaces) || ifaces[i].InterfaceName == "" {
			continue // not on a Multus network, or no guest agent yet
		}
		ns, name, found := strings.Cut(ref, "/")
		if !found {
			ns, name = vmi.Namespace, ref
		}
		provider, ok := s.ovn.provider(ns, name)
		if !ok {
			continue
		}
		ifaces[i].IP, ifaces[i].IPs = "", nil
		if subnet := s.ovn.subnetOf(provider); subnet != nil {
			if a, ok := OverlayAddress(subnet, vmi.Namespace, vmi.Name, i); ok {
				ifaces[i].IP, ifaces[i].IPs = a, []string{a}
			}
		}
	}
}

// provider is the Kube-OVN provider of network namespace/name, false when it is no Kube-OVN network: Kube-OVN
// takes a NetworkAttachmentDefinition of type kube-ovn (pkg/util/network_attachment.go IsOvnNetwork) and names its
// provider <name>.<namespace>.ovn whatever its config says (pkg/controller/pod.go getPodAttachmentNet).
func (k kubeOVN) provider(namespace, name string) (string, bool) {
	obj, exists, err := k.nads.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !exists {
		return "", false
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return "", false
	}
	config, _, _ := unstructured.NestedString(u.Object, "spec", "config")
	var c struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if json.Unmarshal([]byte(config), &c) != nil {
		return "", false
	}
	isOVN := c.Type == "kube-ovn"
	for _, p := range c.Plugins {
		isOVN = isOVN || p.Type == "kube-ovn"
	}
	return name + "." + namespace + ".ovn", isOVN
}

// subnetOf is the Subnet of provider with DHCP on, nil when none: the first whose spec.provider it is, as Kube-OVN
// takes it (getPodAttachmentNet; Harvester allows one per provider, network-controller-harvester
// pkg/webhook/subnet/validator.go checkSubnetsUsingNAD).
func (k kubeOVN) subnetOf(provider string) *unstructured.Unstructured {
	for _, obj := range k.subnets.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if p, _, _ := unstructured.NestedString(u.Object, "spec", "provider"); p != provider {
			continue
		}
		if dhcp, _, _ := unstructured.NestedBool(u.Object, "spec", "enableDHCP"); !dhcp {
			return nil
		}
		return u
	}
	return nil
}

// OverlayAddress is the address the stand-in gives NIC i of VM namespace/name from Kube-OVN Subnet subnet: one of
// the first block of its CIDR (its first IPv4 CIDR of a dual-stack one) that is neither the network's address, its
// last address nor among spec.excludeIps (addresses, or ranges first..last as Kube-OVN writes them), picked by a
// hash of the VM and the NIC so a test can predict it; false when the Subnet has no such address.
func OverlayAddress(subnet *unstructured.Unstructured, namespace, name string, i int) (string, bool) {
	cidr, _, _ := unstructured.NestedString(subnet.Object, "spec", "cidrBlock")
	first, _, _ := strings.Cut(cidr, ",")
	prefix, err := netip.ParsePrefix(strings.TrimSpace(first))
	if err != nil {
		return "", false
	}
	excludes, _, _ := unstructured.NestedStringSlice(subnet.Object, "spec", "excludeIps")
	base := prefix.Masked().Addr()
	n := int64(1) << 16 // a bound on the walk: a larger block (an IPv6 /64) gives its first 65,536 addresses
	if host := base.BitLen() - prefix.Bits(); host <= 16 {
		n = 1<<host - 2 // less the network's and the last address
	}
	if n <= 0 {
		return "", false
	}
	start := int64(hash(fmt.Sprintf("ovn/%s/%s/%d", namespace, name, i)) % uint32(n))
	for t := range n {
		a := addrAt(base, 1+(start+t)%n)
		if !excluded(a, excludes) {
			return a.String(), true
		}
	}
	return "", false
}

// addrAt is base plus off.
func addrAt(base netip.Addr, off int64) netip.Addr {
	b := base.AsSlice()
	v := new(big.Int).SetBytes(b)
	v.Add(v, big.NewInt(off)).FillBytes(b)
	a, _ := netip.AddrFromSlice(b)
	return a
}

// excluded reports whether a is among Kube-OVN excludeIps entries: an address, or first..last.
func excluded(a netip.Addr, excludes []string) bool {
	for _, e := range excludes {
		lo, hi, isRange := strings.Cut(e, "..")
		first, err1 := netip.ParseAddr(strings.TrimSpace(lo))
		last, err2 := netip.ParseAddr(strings.TrimSpace(hi))
		switch {
		case err1 != nil:
		case !isRange && a == first:
			return true
		case isRange && err2 == nil && first.Compare(a) <= 0 && a.Compare(last) <= 0:
			return true
		}
	}
	return false
}
