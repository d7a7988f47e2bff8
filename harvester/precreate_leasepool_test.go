package harvester

import (
	"context"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// leaseChecks runs the pre-flight of machine m1 with --harvester-ip-pool-name vlan1 and returns its IP pool and
// load-balancer pools checks.
func leaseChecks(t *testing.T, fc *fakeCluster) (ipPool, lbPools preflight.Check) {
	t.Helper()
	d := newTestDriver(t, fc, "m1", leaseCreateOptions())
	for _, c := range d.preflight(context.Background(), nil).Checks {
		switch c.Name {
		case preflight.CheckIPPool:
			ipPool = c
		case preflight.CheckLBPools:
			lbPools = c
		}
	}
	return ipPool, lbPools
}

// The range of the IPPool the machine's address is leased from is held against the load balancer's pools as a
// --harvester-ip-pool range is: one that can serve the machine's network and overlaps is refused under
// --harvester-ip-pool-name, naming both pools and what to change; one of another network is not.
func TestLeasePoolOverlapsLBPool(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.ManagedDHCP(leasePool("10.0.0.19"))
	fc.addLBPool(kubefake.LBPool("guests", "default/vlan1", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.15", RangeEnd: "10.0.0.40"}))
	fc.addLBPool(kubefake.LBPool("elsewhere", "default/vlan2", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24"}))
	ipPool, lb := leaseChecks(t, fc)
	if len(ipPool.Problems) > 0 || ipPool.Skipped != "" {
		t.Fatalf("IP pool check: %+v", ipPool)
	}
	want := "IPPool default/vlan1 leases 10.0.0.10-10.0.0.19, which overlaps load-balancer IP pool guests at 10.0.0.15-10.0.0.19 " +
		"(its range 10.0.0.15-10.0.0.40 of subnet 10.0.0.0/24; it serves network default/vlan1): Harvester's load balancer could give those addresses to a Service while a node holds them; " +
		"change the ranges of one of the two pools in Harvester (Networks → IP Pools), or name another IPPool"
	if len(lb.Problems) != 1 || lb.Problems[0].Flag != config.FlagIPPoolName || lb.Problems[0].Message != want {
		t.Errorf("load-balancer pools check: %+v\nwant the problem %q", lb, want)
	}
}

// Without the IPPool's range the load-balancer pools check is skipped, saying why, rather than passed.
func TestLeasePoolLBCheckNeedsTheRange(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	ipPool, lb := leaseChecks(t, fc) // no IPPool
	if len(ipPool.Problems) != 1 || !strings.Contains(ipPool.Problems[0].Message, "IPPool default/vlan1 does not exist in Harvester") {
		t.Errorf("IP pool check: %+v", ipPool)
	}
	if lb.Skipped != "the range of IPPool default/vlan1 is not known: the IP pool check could not read it" || len(lb.Problems) > 0 {
		t.Errorf("load-balancer pools check: %+v", lb)
	}
}
