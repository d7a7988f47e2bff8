package iplease

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Pool is an IPPool of Harvester's managed DHCP as the pre-flight found it.
type Pool struct {
	Ref         config.Ref
	Network     string       // the VM network it serves, namespace/name
	Subnet      netip.Prefix // spec.ipv4Config.cidr
	First, Last netip.Addr   // the range it leases, both inclusive
	Size, Free  int64        // addresses in the range, and how many of them no lease, exclusion or reservation holds
}

// Report is what Check found: the pool (nil when it cannot serve the machines), the problems, and what it could
// not check and why.
type Report struct {
	Pool      *Pool
	Problems  config.Problems
	Unchecked []string
}

// Check is the pre-flight of a lease plan (--harvester-ip-pool-name) for machines machines (a machine pool's
// quantity; 1 for one): the credential may wait for a lease and pin it in the VM namespace; the IPPool exists, serves the
// first NIC's network — its spec says so, and so do the network's labels, by which the controller finds a network's
// pool —, is neither paused nor unready, and has a free address for each machine. It creates nothing. The range it
// finds is checked against the load balancer's pools by the caller.
func Check(ctx context.Context, c kube.Interface, plan *objects.LeasePlan, machines int) Report {
	var r Report
	if plan == nil {
		return r // no VM network on the first NIC: refused by the flags' rules already
	}
	ref, network, namespace := plan.Pool, plan.Network, plan.VM.Namespace
	needed := append(append([]kube.Access{}, Access...), PinAccess)
	denied, err := c.Denied(ctx, namespace, needed)
	switch {
	case err != nil:
		r.Problems.Addf(config.FlagIPPoolName, "%v", c.Explain("check the credential's permissions in namespace", namespace, err))
		return r
	case len(denied) > 0:
		what := make([]string, len(denied))
		for i, a := range denied {
			what[i] = a.String()
		}
		r.Problems.Addf(config.FlagIPPoolName, "the credential may not %s in namespace %s, which a create needs to wait for the machine's lease and pin it; ask for a role that allows it",
			lists.Join(what, "and"), namespace)
		return r
	}
	pool, err := kube.GetCached(ctx, c, kube.NetworkIPPools, ref.Namespace, ref.Name)
	switch {
	case kube.IsGone(err, "ippools", ref.Name):
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s does not exist in Harvester; name the IPPool of Harvester's managed DHCP that serves network %s (kubectl get ippools.network.harvesterhci.io -A)", ref, network)
		return r
	case apierrors.IsNotFound(err):
		r.Problems.Addf(config.FlagIPPoolName, "Harvester serves no %s IPPools: enable its managed DHCP, the vm-dhcp-controller add-on (Harvester 1.9 or later: Advanced → Add-ons)", kube.NetworkGroupVersion)
		return r
	case apierrors.IsForbidden(err):
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the credential may not %s.%s in namespace %s: cannot tell whether IPPool %s serves network %s and has an address for each machine",
			PoolAccess, PoolAccess.Group, ref.Namespace, ref, network))
		return r
	case err != nil:
		r.Problems.Addf(config.FlagIPPoolName, "%v", c.Explain("read IPPool", ref.String(), err))
		return r
	}
	found, why := poolOf(ref, pool)
	if why != "" {
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s %s", ref, why)
		return r
	}
	if found.Network != network.String() {
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s serves network %s, not the first NIC's network %s; name the IPPool of network %s", ref, found.Network, network, network)
		return r
	}
	ok := r.servedBy(ctx, c, network, ref)
	if why := unready(pool); why != "" {
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s %s", ref, why)
		ok = false
	}
	switch {
	case found.Free == 0:
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s has no address free: all %d of %s-%s are leased, excluded or reserved. Remove VMs that hold a lease, or widen the pool's range in Harvester",
			ref, found.Size, found.First, found.Last)
		ok = false
	case found.Free < int64(machines):
		r.Problems.Addf(config.FlagIPPoolName, "IPPool %s has %d of its %d addresses free, %d machines need one each. Remove VMs that hold a lease, or widen the pool's range in Harvester",
			ref, found.Free, found.Size, machines)
		ok = false
	}
	if ok {
		r.Pool = found
	}
	return r
}

// servedBy checks that the vm-dhcp-controller finds pool ref for network: it leases from the IPPool its labels on
// the network's NetworkAttachmentDefinition name (pkg/controller/vmnetcfg/controller.go, getIPPoolFromNetworkName),
// which it sets when it takes a pool up (pkg/controller/ippool/controller.go, ensureNADLabels).
func (r *Report) servedBy(ctx context.Context, c kube.Interface, network, ref config.Ref) bool {
	nad, err := kube.GetCached(ctx, c, kube.Networks, network.Namespace, network.Name)
	switch {
	case apierrors.IsForbidden(err):
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the credential may not get network-attachment-definitions in namespace %s: cannot tell whether Harvester's managed DHCP leases from IPPool %s on network %s",
			network.Namespace, ref, network))
		return true
	case err != nil:
		return true // the networks check says what is wrong with the network
	}
	ns, name := nad.Labels[kube.LabelIPPoolNamespace], nad.Labels[kube.LabelIPPoolName]
	switch {
	case ns == ref.Namespace && name == ref.Name:
		return true
	case ns == "" && name == "":
		r.Problems.Addf(config.FlagIPPoolName, "network %s is not served by Harvester's managed DHCP yet: the vm-dhcp-controller has not taken up IPPool %s (the network lacks its labels %s and %s); check that the add-on runs",
			network, ref, kube.LabelIPPoolNamespace, kube.LabelIPPoolName)
	default:
		r.Problems.Addf(config.FlagIPPoolName, "network %s is served by IPPool %s/%s (its labels %s and %s), which Harvester's managed DHCP leases its addresses from; name that IPPool",
			network, ns, name, kube.LabelIPPoolNamespace, kube.LabelIPPoolName)
	}
	return false
}

// poolOf reads an IPPool as the vm-dhcp-controller does (pkg/ipam/ipam.go, NewIPSubnet, and
// pkg/controller/ippool/controller.go, BuildCache): its network (a name without a namespace is in "default",
// pkg/webhook/vmnetcfg/validator.go normalizeNetworkName), its IPv4 subnet and the range start to end, both
// inclusive and in the subnet, the end not the broadcast address; the range's free addresses are those neither the
// DHCP server's nor the router's, nor excluded, nor in the status's allocated map. It returns why the pool cannot
// be read, "" when it can.
func poolOf(ref config.Ref, pool *kube.NetworkIPPool) (*Pool, string) {
	spec := pool.Spec.IPv4Config
	network := pool.Spec.NetworkName
	if !strings.Contains(network, "/") {
		network = "default/" + network
	}
	subnet, err := netip.ParsePrefix(strings.TrimSpace(spec.CIDR))
	if err != nil || !subnet.Addr().Is4() {
		return nil, fmt.Sprintf("has cidr %q, which is not an IPv4 subnet", spec.CIDR)
	}
	subnet = subnet.Masked()
	first, errFirst := netip.ParseAddr(spec.Pool.Start)
	last, errLast := netip.ParseAddr(spec.Pool.End)
	switch {
	case errFirst != nil || errLast != nil || !subnet.Contains(first) || !subnet.Contains(last) || last.Less(first):
		return nil, fmt.Sprintf("has the range %q to %q, which is not a range of its subnet %s", spec.Pool.Start, spec.Pool.End, subnet)
	case last == config.LastAddr(subnet) && subnet.Bits() < 31:
		return nil, fmt.Sprintf("ends at %s, the broadcast address of %s, which the vm-dhcp-controller refuses", last, subnet)
	}
	p := &Pool{Ref: ref, Network: network, Subnet: subnet, First: first, Last: last, Size: int64(ipv4(last)-ipv4(first)) + 1}
	held := map[netip.Addr]bool{}
	hold := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() && !a.Less(first) && !last.Less(a) {
			held[a] = true
		}
	}
	hold(spec.ServerIP)
	hold(spec.Router)
	for _, a := range spec.Pool.Exclude {
		hold(a)
	}
	if st := pool.Status.IPv4; st != nil {
		for a := range st.Allocated {
			hold(a)
		}
	}
	p.Free = p.Size - int64(len(held))
	return p, ""
}

// unready says why the vm-dhcp-controller does not lease from pool now, "" when it does: the pool is paused
// (spec.paused), its allocator is not loaded (condition CacheReady), or its DHCP server is not running (condition
// AgentReady), each set by the controller's IPPool handlers (pkg/controller/ippool/controller.go).
func unready(pool *kube.NetworkIPPool) string {
	if p := pool.Spec.Paused; p != nil && *p {
		return "is paused (spec.paused): Harvester's managed DHCP leases no address from it; resume it in Harvester"
	}
	for _, c := range []struct{ typ, what string }{
		{"CacheReady", "the vm-dhcp-controller has not loaded it"},
		{"AgentReady", "its DHCP server (the vm-dhcp-controller's agent) is not ready, so guests would get no lease"},
	} {
		cond := kube.FindCondition(pool.Status.Conditions, c.typ)
		if cond != nil && cond.Status == "True" {
			continue
		}
		status := "not set"
		if cond != nil {
			status = string(cond.Status)
			if cond.Reason != "" || cond.Message != "" {
				status += " (" + strings.TrimSpace(cond.Reason+" "+cond.Message) + ")"
			}
		}
		return fmt.Sprintf("is not ready: %s (condition %s %s); check the vm-dhcp-controller add-on in Harvester", c.what, c.typ, status)
	}
	return ""
}

// ipv4 is an IPv4 address as a number.
func ipv4(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
