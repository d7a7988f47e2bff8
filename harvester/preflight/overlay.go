package preflight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Overlay networks (Harvester 1.6 and later with the kubeovn-operator add-on; guest clusters on them from Harvester
// 1.9, harvester/harvester#9682): a VM network whose NetworkAttachmentDefinition is Kube-OVN's. Kube-OVN gives a
// NIC on it an address from the network's Subnet (its own IPAM) and hands it to the guest by DHCP when the Subnet
// has enableDHCP, as Harvester's docs require for guest clusters (docs/rancher/guest-cluster-kubeovn-network.md);
// Harvester's VM mutator then binds the NIC as managedtap so the answer reaches the guest
// (pkg/webhook/resources/virtualmachine/mutator.go patchManagedTapBinding). The guest agent reports the address as
// on a bridge network, so the readiness wait is the same. Kube-OVN routes only the addresses it gave: a static one
// configured in the guest is not reachable (harvester/harvester#8844), so the static addresses of the address plan
// (--harvester-ip-pool) on such a NIC, and network data that may give it a static address, are refused. The
// networks check judges the VM's networks as built (--harvester-vm-patch applied): it finds the NICs on overlay
// networks (overlayOf) and checks them (checkOverlays); the data Secrets check checks the network data a Secret
// holds against what it found (found.overlays).

// SubnetAccess is what checkOverlays reads: Kube-OVN's cluster-scoped Subnets. It is not asked for in the access
// review: a credential without it is not blocked (that part of the check is then skipped, and says why).
var SubnetAccess = kube.Access{Group: kube.KubeOVNGroupVersion.Group, Resource: "subnets", Verb: "list", ClusterScoped: true}

// overlayNIC is a NIC of the VM on a Kube-OVN network: the network's provider names its Subnet.
type overlayNIC struct {
	vmNetwork
	provider string
}

// overlayOf tells whether n's network nad is a Kube-OVN network; a configuration the driver cannot read is a
// problem of the NIC's flag.
func overlayOf(r *run, n vmNetwork, nad *kube.NetworkAttachmentDefinition) (overlayNIC, bool) {
	provider, ovn, err := nad.KubeOVNProvider()
	if err != nil {
		r.p.Addf(n.flag, "%s: %v", n.nic, err)
	}
	return overlayNIC{vmNetwork: n, provider: provider}, ovn
}

// checkOverlays checks the VM's NICs on overlay networks: no static address from the address plan
// (--harvester-ip-pool, which goes on the VM's first NIC), no lease of Harvester's managed DHCP
// (--harvester-ip-pool-name, the first NIC's too) and none from the inline network data, and a Subnet of each network
// that is ready, has DHCP on and has an address free for each machine.
func checkOverlays(ctx context.Context, r *run, overlays []overlayNIC) {
	if len(overlays) == 0 {
		return
	}
	if i := slices.IndexFunc(overlays, func(o overlayNIC) bool { return o.nic == config.PrimaryNIC }); i >= 0 {
		o := overlays[i]
		// Both pools address the first NIC. vm-dhcp-controller's agent answers DHCP on the bridge of a VLAN network
		// (harvester/vm-dhcp-controller pkg/agent); on an overlay network Kube-OVN answers, with an address of its
		// own Subnet.
		for _, pool := range []struct {
			flag, why string
			given     bool
		}{
			{config.FlagIPPool, "a static address would not be reachable", r.in.Machine.Addresses != nil},
			{config.FlagIPPoolName, "Harvester's managed DHCP would lease one no one routes", r.in.Machine.Lease != nil},
		} {
			if pool.given {
				r.p.Addf(pool.flag, "%s is on Kube-OVN overlay network %s, where Kube-OVN gives the VM its address (its own IPAM, by DHCP) and routes that one alone: "+
					"%s; leave --%s out, or put %s on a VLAN network", o.nic, o.network, pool.why, pool.flag, o.nic)
			}
		}
	}
	if r.cfg.NetworkDataSecret == nil { // the Secret's data is the data Secrets check's
		refuseStaticOnOverlay(&r.p, config.FlagNetworkData, r.in.Machine, overlays, r.cfg.NetworkData)
	}
	subnets, err := kube.List(ctx, r.c, kube.Subnets, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		r.u.addf("the credential may not %s.%s: cannot tell whether %s %s a Kube-OVN subnet with a free address", SubnetAccess, SubnetAccess.Group,
			lists.Join(overlayNetworks(overlays), "and"), verbHas(len(overlayNetworks(overlays))))
		return
	case apierrors.IsNotFound(err):
		// A list is never "not found" but for a resource the API server does not serve.
		for _, o := range overlays {
			r.p.Addf(o.flag, "%s: network %s is a Kube-OVN overlay network, but Harvester serves no Kube-OVN subnets (%s): enable the kubeovn-operator add-on "+
				"(Advanced → Add-ons) and give the network a subnet", o.nic, o.network, kube.KubeOVNGroupVersion)
		}
		return
	case err != nil:
		r.p.Addf(overlays[0].flag, "%v", r.c.Explain("list the Kube-OVN subnets of", lists.Join(overlayNetworks(overlays), "and"), err))
		return
	}
	var seen []string
	for _, o := range overlays {
		if s := judgeSubnet(r, o, subnets, overlays); s != "" {
			seen = append(seen, s)
		}
	}
	r.detail = strings.Join(seen, "; ")
}

// judgeSubnet checks the Subnet of o's network, and returns what the check line says of it when it is fine.
func judgeSubnet(r *run, o overlayNIC, subnets []kube.Subnet, overlays []overlayNIC) string {
	network := o.network
	i := slices.IndexFunc(subnets, func(s kube.Subnet) bool { return s.Spec.Provider == o.provider })
	if i < 0 {
		r.p.Addf(o.flag, "%s: no Kube-OVN subnet serves overlay network %s (none has provider %s), so Kube-OVN has no address for the VM; "+
			"create one in Harvester (Networks → Virtual Private Cloud → Create Subnet, provider %s)", o.nic, network, o.provider, network)
		return ""
	}
	s := subnets[i] // Kube-OVN takes the first whose provider it is; Harvester allows one a network
	name := fmt.Sprintf("Kube-OVN subnet %s (%s) of overlay network %s", s.Name, s.Spec.CIDRBlock, network)
	if why := subnetNotReady(s.Status.Conditions); why != "" {
		r.p.Addf(o.flag, "%s: %s is not ready (%s); see its conditions in Harvester (Networks → Virtual Private Cloud)", o.nic, name, why)
		return ""
	}
	if !s.Spec.EnableDHCP {
		r.p.Addf(o.flag, "%s: %s has DHCP off, so the guest would get no address (Kube-OVN hands its addresses out by DHCP, and routes no other); "+
			"turn it on in Harvester (the subnet's Edit as YAML: spec.enableDHCP: true)", o.nic, name)
		return ""
	}
	free, family := freeAddresses(s)
	need := machineCount(r.in) * len(slices.DeleteFunc(slices.Clone(overlays), func(x overlayNIC) bool { return x.provider != o.provider }))
	switch {
	case free == 0:
		r.p.Addf(o.flag, "%s: %s has no free %s address (%d in use), so the VM would get none; free addresses or widen the subnet in Harvester",
			o.nic, name, family, usedAddresses(s))
		return ""
	case free < int64(need):
		r.p.Addf(o.flag, "%s: %s has %d free %s addresses, fewer than the %d the machines need; free addresses or widen the subnet in Harvester",
			o.nic, name, free, family, need)
		return ""
	}
	return fmt.Sprintf("%s on overlay network %s: Kube-OVN subnet %s %s, %d free addresses", o.nic, network, s.Name, s.Spec.CIDRBlock, free)
}

// subnetNotReady says why Kube-OVN does not give out a Subnet's addresses, "" when it does: a Ready or Validated
// condition that is not True, with its reason and message, as kube-ovn pkg/controller/subnet.go patchSubnetStatus
// sets them; or no conditions at all (Kube-OVN has not handled the Subnet).
func subnetNotReady(conds []kube.SubnetCondition) string {
	if len(conds) == 0 {
		return "Kube-OVN has not reported on it: no conditions"
	}
	for _, typ := range []string{"Validated", "Ready"} {
		for _, c := range conds {
			if c.Type == typ && c.Status != "True" {
				return strings.TrimRight(fmt.Sprintf("%s %s: %s %s", typ, c.Status, c.Reason, c.Message), ": ")
			}
		}
	}
	return ""
}

// freeAddresses is how many addresses a Subnet can still give, and of which family: a dual-stack NIC takes one of
// each, so the scarcer counts. The counts are Kube-OVN's status (calcSubnetStatusIP), held to whole numbers from 0
// up; a Subnet without a protocol is taken as IPv4, as Kube-OVN takes one whose CIDR is (formatSubnet).
func freeAddresses(s kube.Subnet) (int64, string) {
	v4, v6 := count(s.Status.V4AvailableIPs), count(s.Status.V6AvailableIPs)
	switch s.Spec.Protocol {
	case "IPv6":
		return v6, "IPv6"
	case "Dual":
		if v6 < v4 {
			return v6, "IPv6"
		}
	}
	return v4, "IPv4"
}

func usedAddresses(s kube.Subnet) int64 {
	return count(s.Status.V4UsingIPs) + count(s.Status.V6UsingIPs)
}

// count holds a count read from the cluster to a whole number from 0 to a bound no subnet reaches.
func count(f float64) int64 {
	switch {
	case math.IsNaN(f) || f < 0:
		return 0
	case f > 1<<53:
		return 1 << 53
	}
	return int64(f)
}

// refuseStaticOnOverlay records, under flag, each entry of network data doc that may give a NIC of m's VM on an
// overlay network a static address (see objects.StaticallyAddressedNICs).
func refuseStaticOnOverlay(p *config.Problems, flag string, m *objects.Machine, overlays []overlayNIC, doc []byte) {
	if len(doc) == 0 || len(overlays) == 0 {
		return
	}
	addressed, err := objects.StaticallyAddressedNICs(m.VM, doc)
	if err != nil {
		return // refused by the configuration's check already
	}
	for _, o := range overlays {
		entries := addressed[o.nic]
		if len(entries) == 0 {
			continue
		}
		p.Addf(flag, "%s %s static addresses to a NIC that may be %s, which is on Kube-OVN overlay network %s, where Kube-OVN gives the address (by DHCP) and routes no other; "+
			"let %s take DHCP, and match entries with static addresses by macaddress to NICs on VLAN networks (their macAddress in --%s)",
			lists.Join(entries, "and"), verbGive(len(entries)), o.nic, o.network, o.nic, config.FlagNetworkInfo)
	}
}

// overlayNetworks names the overlay NICs' networks, once each.
func overlayNetworks(overlays []overlayNIC) []string {
	var out []string
	for _, o := range overlays {
		out = append(out, "network "+o.network.String())
	}
	return lists.SortedUnique(out)
}

func verbHas(n int) string {
	if n > 1 {
		return "have"
	}
	return "has"
}

func verbGive(n int) string {
	if n > 1 {
		return "give"
	}
	return "gives"
}
