package preflight

import (
	"context"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
)

// LBPoolAccess is what checkLBPools reads: Harvester's cluster-scoped load-balancer IP pools. It is not asked for
// in the access review: a credential without it is not blocked (the check is then skipped, and says why).
var LBPoolAccess = kube.Access{Group: kube.LoadBalancerGroupVersion.Group, Resource: "ippools", Verb: "list", ClusterScoped: true}

// checkLBPools refuses an address plan (--harvester-ip-pool) with a range that overlaps a range of a
// load-balancer IP pool that can serve the plan's network (see lbServes): Harvester's load balancer would hand a
// guest cluster's Service an address a node holds, or a node one a Service holds. A lease plan's IPPool is held
// against them by checkLeaseLBPools. One list of the pools, from the API server's watch cache. A
// credential that may not list them, and a Harvester that serves none (before v1.2 the load balancer kept its
// ranges in the ConfigMap kube-system/kubevip), leave the check skipped. It creates nothing.
func checkLBPools(ctx context.Context, r *run) {
	if r.in.Machine.Lease != nil {
		checkLeaseLBPools(ctx, r) // --harvester-ip-pool-name (leasepool.go)
		return
	}
	plan := r.in.Machine.Addresses
	if plan == nil {
		return // no VM network on the first NIC: the flags are refused already
	}
	network := plan.Network.String()
	pools, ok := listLBPools(ctx, r, config.FlagIPPool)
	if !ok {
		return
	}
	for i, pool := range plan.Ranges { // both ranges of a dual-stack pool
		overlaps, unusable := lbOverlaps(pools, pool, network, plan.VM.Namespace)
		if len(unusable) > 0 && i == 0 {
			logging.Debugf("Load-balancer IP pools Harvester cannot allocate from, not checked: %s", strings.Join(unusable, "; "))
		}
		for _, o := range overlaps {
			r.p.Addf(config.FlagIPPool, "%s-%s overlaps load-balancer IP pool %s at %s (its range %s; %s): Harvester's load balancer could give those addresses to a Service while a node holds them; "+
				"give --%s a range outside %s-%s, or change the pool's ranges in Harvester (Networks → IP Pools)",
				pool.First, pool.Last, o.Pool, span(o.First, o.Last), o.Range, o.Why, config.FlagIPPool, o.Range.First, o.Range.Last)
		}
	}
}

// listLBPools lists Harvester's load-balancer IP pools, from the API server's watch cache, for a check of the pool
// of flag; ok is false when the check cannot be made (said in r).
func listLBPools(ctx context.Context, r *run, flag string) (pools []kube.IPPool, ok bool) {
	pools, err := kube.List(ctx, r.c, kube.IPPools, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		r.u.addf("the credential may not %s.%s: cannot tell whether --%s overlaps a load-balancer IP pool", LBPoolAccess, LBPoolAccess.Group, flag)
		return nil, false
	case apierrors.IsNotFound(err):
		// A list is never "not found" but for a resource the API server does not serve.
		r.u.addf("Harvester serves no %s/%s IP pools (before Harvester v1.2 load-balancer ranges are in ConfigMap kube-system/kubevip): cannot tell whether --%s overlaps one",
			kube.LoadBalancerGroupVersion.Group, kube.LoadBalancerGroupVersion.Version, flag)
		return nil, false
	case err != nil:
		r.p.Addf(flag, "%v", r.c.Explain("list the load-balancer IP pools to check", "--"+flag, err))
		return nil, false
	}
	return pools, true
}

// span words an inclusive range of addresses: one address alone, else FIRST-LAST.
func span(first, last netip.Addr) string {
	if first == last {
		return first.String()
	}
	return first.String() + "-" + last.String()
}

// ipPoolGiven reports whether the machine's first NIC takes its address from a pool: an address plan
// (--harvester-ip-pool) or a lease plan (--harvester-ip-pool-name).
func ipPoolGiven(in *Input) bool { return in.Machine.Addresses != nil || in.Machine.Lease != nil }

// poolFlags are the flags of the first NIC's address pool: the driver's range, or an IPPool of Harvester's managed
// DHCP. The IP pool check and the load-balancer pools check judge whichever is given.
var poolFlags = []string{config.FlagIPPool, config.FlagIPPoolName}

// checkIPPool makes sure the address plan's pool has an address for each machine (ippool.Check). What it finds
// are the addresses a create would take now (found.addresses), for the admission's dry run. A lease plan's IPPool
// is checked by checkLeasePool.
func checkIPPool(ctx context.Context, r *run) {
	if r.in.Machine.Lease != nil {
		checkLeasePool(ctx, r) // --harvester-ip-pool-name (leasepool.go)
		return
	}
	r.found.addresses = ippool.Check(ctx, r.c, r.in.Machine.Addresses, machineCount(r.in), &r.p)
}
