package scenarios

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// A dual-stack pool under concurrent creates on the real control plane: every machine gets one IPv4 and one IPv6
// address, no address twice; the create past the IPv6 range's end is refused and gives its IPv4 address back;
// removing every machine releases every allocation. (The test's name is kept short: the namespace made from it
// stays under 32 letters, which error messages would hide as a possible token.)
func TestDualStackPoolCreates(t *testing.T) {
	const n = 12
	b := testbed.Shared(t)
	vmNS, netNS := b.Namespace(t), b.Namespace(t)
	createVMNetwork(t, b, netNS, "dual-net")
	quietDriverLog(t)
	m := createPoolMachines(t, b, vmNS, netNS, "dual-net", "dual", n, map[string]any{
		// One IPv4 address more than IPv6 ones: the IPv6 range runs out first.
		config.FlagIPPool:        fmt.Sprintf("10.89.0.1-10.89.0.%d/24,2001:db8:89::1-2001:db8:89::%x/64", n+1, n),
		config.FlagIPPoolGateway: "2001:db8:89::ff,10.89.0.254",
	})
	v4Net, v6Net := netip.MustParsePrefix("10.89.0.0/24"), netip.MustParsePrefix("2001:db8:89::/64")
	seen := map[string]int{}
	for i, d := range m.drivers {
		v4, err4 := d.GetIP()
		v6, err6 := d.GetIPv6()
		a4, perr4 := netip.ParseAddr(v4)
		a6, perr6 := netip.ParseAddr(v6)
		if err4 != nil || err6 != nil || perr4 != nil || perr6 != nil || !v4Net.Contains(a4) || !v6Net.Contains(a6) {
			t.Errorf("machine %d: addresses %q (%v) and %q (%v), want one of each range", i, v4, err4, v6, err6)
			continue
		}
		for _, ip := range []string{v4, v6} {
			if other, dup := seen[ip]; dup {
				t.Errorf("machines %d and %d both got %s", other, i, ip)
			}
			seen[ip] = i
		}
	}
	if cms := ipAllocations(t, b, netNS); len(cms) != 2*n {
		t.Errorf("%d allocations for %d dual-stack machines: %v", len(cms), n, cms)
	}

	m.refusedOneMore(fmt.Sprintf("--harvester-ip-pool: the range 2001:db8:89::1-2001:db8:89::%x/64 on network %s/dual-net is exhausted", n, netNS))
	if cms := ipAllocations(t, b, netNS); len(cms) != 2*n {
		t.Errorf("the refused create kept an address: %d allocations for %d machines: %v", len(cms), n, cms)
	}

	m.removeAll()
}
