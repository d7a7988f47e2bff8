package objects

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

func TestAllocationName(t *testing.T) {
	net1 := config.Ref{Namespace: "default", Name: "vlan1"}
	for addr, want := range map[string]string{
		"10.0.0.10":   "ip-vlan1-10-0-0-10",
		"2001:db8::":  "ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0000",
		"2001:db8::1": "ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0001",
	} {
		if got := AllocationName(net1, netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
	long := config.Ref{Namespace: "default", Name: strings.Repeat("n", 240)}
	a, b := AllocationName(long, netip.MustParseAddr("2001:db8::1")), AllocationName(config.Ref{Namespace: "default", Name: strings.Repeat("n", 239) + "m"}, netip.MustParseAddr("2001:db8::1"))
	for _, name := range []string{a, b} {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			t.Errorf("%q is not a ConfigMap name: %v", name, msgs)
		}
	}
	if a == b || !strings.HasSuffix(a, "-2001-0db8-0000-0000-0000-0000-0000-0001") {
		t.Errorf("hashed names %q and %q: must differ and keep the address", a, b)
	}
}

func TestStaticMAC(t *testing.T) {
	net1, net2 := config.Ref{Namespace: "default", Name: "vlan1"}, config.Ref{Namespace: "default", Name: "vlan2"}
	seen := map[string]string{}
	for _, n := range []config.Ref{net1, net2} {
		for _, a := range []string{"10.0.0.10", "10.0.0.11", "10.0.1.10", "2001:db8::10", "2001:db8::11"} {
			mac := StaticMAC(n, netip.MustParseAddr(a))
			hw, err := net.ParseMAC(mac)
			switch {
			case err != nil || len(hw) != 6:
				t.Fatalf("%s: %q is not a MAC address", a, mac)
			case hw[0]&1 != 0 || hw[0]&2 == 0:
				t.Errorf("%s on %s: %s is not a locally administered unicast address", a, n, mac)
			case mac != StaticMAC(n, netip.MustParseAddr(a)):
				t.Errorf("%s: not deterministic", a)
			}
			if other, dup := seen[mac]; dup {
				t.Errorf("%s on %s and %s share the MAC %s", a, n, other, mac)
			}
			seen[mac] = a + " on " + n.String()
		}
	}
	if got := StaticMAC(net1, netip.MustParseAddr("10.0.0.10")); !strings.HasSuffix(got, ":0a:00:00:0a") {
		t.Errorf("an IPv4 MAC ends in the address: %s", got)
	}
}
