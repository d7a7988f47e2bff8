package scenarios

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester"
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
	ctx := context.Background()
	createVMNetwork(t, b, netNS, "dual-net")
	quietDriverLog(t)
	opts := config.DefaultOptions()
	for k, v := range map[string]any{
		config.FlagKubeconfigContent: string(b.AdminKubeconfig()), config.FlagVMNamespace: vmNS,
		config.FlagImageName: "default/ubuntu-22.04", config.FlagDiskSize: 10, config.FlagNetworkName: netNS + "/dual-net",
		// One IPv4 address more than IPv6 ones: the IPv6 range runs out first.
		config.FlagIPPool:        fmt.Sprintf("10.89.0.1-10.89.0.%d/24,2001:db8:89::1-2001:db8:89::%x/64", n+1, n),
		config.FlagIPPoolGateway: "2001:db8:89::ff,10.89.0.254", config.FlagCreateTimeout: "300",
	} {
		opts[k] = v
	}
	newDriver := func(i int) *harvester.Driver {
		d := harvester.NewDriver(fmt.Sprintf("dual-%02d", i), t.TempDir())
		if err := d.SetConfigFromFlags(opts); err != nil {
			t.Fatal(err)
		}
		return d
	}
	drivers := make([]*harvester.Driver, n)
	for i := range drivers {
		drivers[i] = newDriver(i)
	}
	eachDriver(drivers, func(i int, d *harvester.Driver) {
		if err := d.PreCreateCheck(); err != nil {
			t.Errorf("machine %d: pre-flight: %v", i, err)
			return
		}
		if err := d.Create(); err != nil {
			t.Errorf("machine %d: %v", i, err)
		}
	})
	v4Net, v6Net := netip.MustParsePrefix("10.89.0.0/24"), netip.MustParsePrefix("2001:db8:89::/64")
	seen := map[string]int{}
	for i, d := range drivers {
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

	last := newDriver(n)
	for step, run := range map[string]func() error{"pre-flight": last.PreCreateCheck, "create": last.Create} {
		err := run()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--harvester-ip-pool: the range 2001:db8:89::1-2001:db8:89::%x/64 on network %s/dual-net is exhausted", n, netNS)) {
			t.Errorf("machine %d's %s: %v", n+1, step, err)
		}
	}
	if _, err := b.Virt.KubevirtV1().VirtualMachines(vmNS).Get(ctx, last.MachineName, metav1.GetOptions{}); err == nil {
		t.Errorf("the refused create made a VM")
	}
	if cms := ipAllocations(t, b, netNS); len(cms) != 2*n {
		t.Errorf("the refused create kept an address: %d allocations for %d machines: %v", len(cms), n, cms)
	}

	eachDriver(drivers, func(i int, d *harvester.Driver) {
		if err := d.Remove(); err != nil {
			t.Errorf("machine %d: remove: %v", i, err)
		}
	})
	if cms := ipAllocations(t, b, netNS); len(cms) != 0 {
		t.Errorf("allocations left after removing every machine: %v", cms)
	}
	nothingLeft(t, b, vmNS)
}
