package harvester

import (
	"context"
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
)

// poolFlags are the flags of the first NIC's address pool: the driver's range, or an IPPool of Harvester's managed
// DHCP. The IP pool check and the load-balancer pools check judge whichever is given.
var poolFlags = []string{config.FlagIPPool, config.FlagIPPoolName}

// anyPoolGiven reports whether the first NIC's address comes from a pool (poolFlags).
func anyPoolGiven(cfg *config.Config) bool { return cfg.IPPool != nil || cfg.LeasePool != nil }

// checkLeasePool is the IP pool check of --harvester-ip-pool-name (iplease.Check): the IPPool serves the first NIC's
// network and has a free address for each machine. What it finds is the pool (*iplease.Pool), whose range the
// load-balancer pools check holds against the load balancer's.
func checkLeasePool(ctx context.Context, r *checkRun) {
	report := iplease.Check(ctx, r.c, r.cfg, r.machineCount())
	r.p.List = append(r.p.List, report.Problems.List...)
	for _, u := range report.Unchecked {
		r.u.addf("%s", u)
	}
	if pool := report.Pool; pool != nil {
		r.findings = pool
		r.detail = fmt.Sprintf("%s, %d of its %d addresses free", pool, pool.Free, pool.Size)
	}
}

// checkLeaseLBPools refuses an IPPool of Harvester's managed DHCP whose range overlaps a range of a load-balancer
// IP pool that can serve the machine's network (lbServes), as checkLBPools does a --harvester-ip-pool range: the
// load balancer could give a Service an address the managed DHCP leases a node. The IPPool's range is what the IP
// pool check found; without it the check is skipped.
func checkLeaseLBPools(ctx context.Context, r *checkRun) {
	pool, _ := r.findingsOf(CheckIPPool).(*iplease.Pool)
	if pool == nil {
		r.u.addf("the range of IPPool %s is not known: the IP pool check could not read it", r.cfg.LeasePool)
		return
	}
	lbPools, ok := listLBPools(ctx, r, config.FlagIPPoolName)
	if !ok {
		return
	}
	overlaps, unusable := lbOverlaps(lbPools, &config.IPPool{First: pool.First, Last: pool.Last, Subnet: pool.Subnet}, pool.Network, r.cfg.Namespace)
	if len(unusable) > 0 {
		logging.Debugf("Load-balancer IP pools Harvester cannot allocate from, not checked: %s", strings.Join(unusable, "; "))
	}
	for _, o := range overlaps {
		r.p.Addf(config.FlagIPPoolName, "IPPool %s leases %s-%s, which overlaps load-balancer IP pool %s at %s (its range %s; %s): Harvester's load balancer could give those addresses to a Service while a node holds them; "+
			"change the ranges of one of the two pools in Harvester (Networks → IP Pools), or name another IPPool",
			pool.Ref, pool.First, pool.Last, o.Pool, span(o.First, o.Last), o.Range, o.Why)
	}
}
