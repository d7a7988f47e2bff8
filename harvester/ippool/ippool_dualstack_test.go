package ippool

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// A dual-stack pool: a machine takes the first free address of each range, IPv4 first, both on the IPv4
// address's MAC; with one range used up, the pre-flight names that range alone, and the allocation returns the
// address it took from the other with the error, for the create's rollback to release.
func TestAllocateDualStack(t *testing.T) {
	fc := newFakeCluster(t)
	const pool = "10.0.0.10-10.0.0.12/24,2001:db8::10-2001:db8::10/64"
	taken := fc.allocate("m1", pool)
	if len(taken) != 2 || taken[0].Static.Address != netip.MustParsePrefix("10.0.0.10/24") || taken[1].Static.Address != netip.MustParsePrefix("2001:db8::10/64") {
		t.Fatalf("allocated %+v %+v, want each range's first address", taken[0].Static, taken[len(taken)-1].Static)
	}
	if taken[1].Static.MAC != taken[0].Static.MAC {
		t.Errorf("the IPv6 address is on MAC %s, the IPv4 one on %s: want one NIC", taken[1].Static.MAC, taken[0].Static.MAC)
	}
	if err := RecordVM(context.Background(), fc.C, taken, fc.vm("m1", nil)); err != nil {
		t.Fatal(err)
	}

	plan := poolPlan(t, "m2", pool)
	const want = "--harvester-ip-pool: the range 2001:db8::10-2001:db8::10/64 on network default/vlan1 is exhausted: all 1 of its addresses are allocated"
	if got := fc.checkProblems(plan, 1); !strings.Contains(got, want) || strings.Contains(got, "10.0.0.10-10.0.0.12/24 on network") {
		t.Errorf("Check: %q\nwant %q alone", got, want)
	}
	second, err := Allocate(context.Background(), fc.C, plan, "this-create")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Allocate: %v\nwant %q", err, want)
	}
	if len(second) != 1 || second[0].Static.Address != netip.MustParsePrefix("10.0.0.11/24") {
		t.Errorf("Allocate returned %d allocations, want the IPv4 one it took (10.0.0.11)", len(second))
	}
}
