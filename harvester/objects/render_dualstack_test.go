package objects

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

// A dual-stack pool: the first NIC's entry carries the first address of each range, a default route per family,
// the DNS servers of both families, on the MAC address derived from the IPv4 address; the VM names both
// allocations.
func TestRenderGoldenDualStackIPPool(t *testing.T) {
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-vlan10",
		"--harvester-ip-pool", "2001:db8:10::10-2001:db8:10::59/64,10.10.0.10-10.10.0.59/24",
		"--harvester-ip-pool-gateway", "10.10.0.1,2001:db8:10::1", "--harvester-ip-pool-dns", "10.10.0.2,2001:db8:10::53",
		"--harvester-ip-pool-dns-search", "example.com")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	mac := StaticMAC(config.Ref{Namespace: "default", Name: "vm-vlan10"}, netip.MustParseAddr("10.10.0.10"))
	for _, want := range []string{
		"# The addresses are allocated at create from 10.10.0.10-10.10.0.59/24 and 2001:db8:10::10-2001:db8:10::59/64; shown: each range's first.",
		`- "10.10.0.10/24"`, `- "2001:db8:10::10/64"`, `via: "10.10.0.1"`, `via: "2001:db8:10::1"`, `- "2001:db8:10::53"`,
		`macaddress: "` + mac + `"`, "macAddress: " + mac,
		config.AnnotationIPAllocation + ": default/ip-vm-vlan10-10-10-0-10,default/ip-vm-vlan10-2001-0db8-0010-0000-0000-0000-0000-0010"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/ip-pool-dual-stack.yaml", got)
}
