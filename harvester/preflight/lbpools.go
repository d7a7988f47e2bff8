package preflight

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// Which of Harvester's load-balancer IP pools can hand a machine's static address (--harvester-ip-pool, on the
// first NIC's VM network) to a load balancer as well. Harvester's load balancer picks a pool for a load balancer
// that names none (harvester-load-balancer pkg/controller/loadbalancer/controller.go, selectIPPool) by a
// requirement — the network, project, namespace and guest cluster from the load balancer's annotations, the
// namespace defaulting to the load balancer's own — which a pool's selector matches when its network equals the
// requirement's and one of its scope tuples matches, "*" matching anything (pkg/ipam/selector.go,
// Matcher.Matches); a pool labelled global serves every requirement no other pool matches, whatever the network
// (Selector.Select; commit e861dc94 reverted the network matching of global pools). A load balancer may also name
// its pool (LoadBalancer spec.ipPool), which is then used without any matching (allocateIPFromPool). For a guest
// cluster's load balancer the network is the first Multus network of the cluster's VMIs — this driver's first NIC —
// unless annotated (pkg/webhook/loadbalancer/mutator.go, findNetwork); a VM load balancer gets no network
// (getAnnotationsPatchVM).
//
// So a pool can serve this machine's network when:
//   - its selector's network is the first NIC's network, whatever its scope: its addresses are meant for that
//     network, and load balancers of any namespace whose VMs sit on it (or that name the pool) get them;
//   - it is the global pool, whatever its selector: it serves any network that has no pool of its own;
//   - its selector names no network and a scope tuple's namespace is "*" or the machine's namespace: it serves the
//     load balancers of that namespace whose network is not known (VM load balancers, guest clusters whose network
//     the mutator could not find), and nothing says they are not on this network. The project and guest cluster
//     of a tuple are not checked: the driver cannot know them, so they may match.
//
// A pool whose selector names another network is not this network's, nor is a pool without a network whose scope
// cannot match the namespace.

// lbRange is one range of a load-balancer IP pool as Harvester's load balancer allocates from it: First to Last,
// inclusive, in Subnet.
type lbRange struct {
	First, Last netip.Addr
	Subnet      netip.Prefix
}

func (r lbRange) String() string { return fmt.Sprintf("%s-%s of subnet %s", r.First, r.Last, r.Subnet) }

// lbOverlap is a range of a pool that can serve the machine's network and overlaps its --harvester-ip-pool.
type lbOverlap struct {
	Pool  string
	Why   string // why the pool can serve the machine's network
	Range lbRange
	// First and Last bound the addresses both hand out.
	First, Last netip.Addr
}

// lbServes says why pool can give addresses on the machine's network (network is the first NIC's, namespace/name;
// namespace the machine's), or "" when it cannot.
func lbServes(pool kube.IPPool, network, namespace string) string {
	sel := pool.Spec.Selector
	switch {
	case pool.Labels[kube.LabelGlobalIPPool] == "true":
		return "it is the global pool (label " + kube.LabelGlobalIPPool + "=true), which serves every network without a pool of its own"
	case sel.Network == network:
		return "it serves network " + network
	case sel.Network == "" && slices.ContainsFunc(sel.Scope, func(t kube.IPPoolScope) bool { return t.Namespace == "*" || t.Namespace == namespace }):
		return "it serves load balancers of namespace " + namespace + " and names no network"
	}
	return ""
}

// lbOverlaps returns the ranges of the pools that can serve the machine's network and overlap its pool, by pool
// name and range, and the pools Harvester's load balancer cannot allocate from (a range it refuses: see lbRanges),
// with why.
func lbOverlaps(pools []kube.IPPool, mine *config.IPPool, network, namespace string) (overlaps []lbOverlap, unusable []string) {
	for _, pool := range pools {
		why := lbServes(pool, network, namespace)
		if why == "" {
			continue
		}
		ranges, err := lbRanges(pool.Spec.Ranges)
		if err != nil {
			unusable = append(unusable, fmt.Sprintf("pool %s: %v", pool.Name, err))
			continue
		}
		for _, r := range ranges {
			if first, last, ok := overlap(mine.First, mine.Last, r.First, r.Last); ok {
				overlaps = append(overlaps, lbOverlap{Pool: pool.Name, Why: why, Range: r, First: first, Last: last})
			}
		}
	}
	slices.SortStableFunc(overlaps, func(a, b lbOverlap) int { return strings.Compare(a.Pool, b.Pool) })
	return overlaps, unusable
}

// overlap is the part two inclusive ranges share, if any; ranges of different families share nothing.
func overlap(aFirst, aLast, bFirst, bLast netip.Addr) (first, last netip.Addr, ok bool) {
	if aFirst.Is4() != bFirst.Is4() {
		return netip.Addr{}, netip.Addr{}, false
	}
	first, last = aFirst, aLast
	if bFirst.Compare(first) > 0 {
		first = bFirst
	}
	if bLast.Compare(last) < 0 {
		last = bLast
	}
	return first, last, first.Compare(last) <= 0
}
