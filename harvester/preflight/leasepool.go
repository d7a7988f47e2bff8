package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
)

// checkLeasePool is the IP pool check of a lease plan (--harvester-ip-pool-name, iplease.Check): the IPPool serves
// the first NIC's network and has a free address for each machine. What it finds is the pool (found.leasePool),
// whose range the load-balancer pools check holds against the load balancer's.
func checkLeasePool(ctx context.Context, r *run) {
	report := iplease.Check(ctx, r.c, r.in.Machine.Lease, machineCount(r.in))
	r.p.List = append(r.p.List, report.Problems.List...)
	for _, u := range report.Unchecked {
		r.u.addf("%s", u)
	}
	if pool := report.Pool; pool != nil {
		r.found.leasePool = pool
		r.detail = fmt.Sprintf("it leases %s-%s of %s, %d of its %d addresses free", pool.First, pool.Last, pool.Subnet, pool.Free, pool.Size)
	}
}

// checkLeaseLBPools refuses an IPPool of Harvester's managed DHCP whose range overlaps a range of a load-balancer
// IP pool that can serve the machine's network (lbServes), as checkLBPools does a --harvester-ip-pool range: the
// load balancer could give a Service an address the managed DHCP leases a node. The IPPool's range is what the IP
// pool check found; without it the check is skipped.
func checkLeaseLBPools(ctx context.Context, r *run) {
	plan := r.in.Machine.Lease
	r.await(CheckIPPool)
	pool := r.found.leasePool
	if pool == nil {
		r.u.addf("the range of IPPool %s is not known: the IP pool check could not read it", plan.Pool)
		return
	}
	lbPools, ok := listLBPools(ctx, r, config.FlagIPPoolName)
	if !ok {
		return
	}
	overlaps, unusable := lbOverlaps(lbPools, &config.IPPool{First: pool.First, Last: pool.Last, Subnet: pool.Subnet}, pool.Network, plan.VM.Namespace)
	if len(unusable) > 0 {
		logging.Debugf("Load-balancer IP pools Harvester cannot allocate from, not checked: %s", strings.Join(unusable, "; "))
	}
	for _, o := range overlaps {
		r.p.Addf(config.FlagIPPoolName, "IPPool %s leases %s-%s, which overlaps load-balancer IP pool %s at %s (its range %s; %s): Harvester's load balancer could give those addresses to a Service while a node holds them; "+
			"change the ranges of one of the two pools in Harvester (Networks → IP Pools), or name another IPPool",
			pool.Ref, pool.First, pool.Last, o.Pool, span(o.First, o.Last), o.Range, o.Why)
	}
}
