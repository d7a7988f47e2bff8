package standin

import (
	"slices"
	"testing"
)

// A guest asks DHCP on the NICs a version 2 entry matched by MAC address gives dhcp4: true (the driver's entry
// for a lease of Harvester's managed DHCP), under a top-level network key or not; an entry matched by name, one
// without dhcp4 and a version 1 document ask for no lease.
func TestDHCPNICs(t *testing.T) {
	macs := []string{"0a:00:00:00:00:01", "0a:00:00:00:00:02"}
	for _, tc := range []struct {
		name, doc string
		want      []int
	}{
		{"by MAC, beside a static NIC", "version: 2\nethernets:\n  nic-0:\n    match: {macaddress: \"0A:00:00:00:00:02\"}\n    dhcp4: true\n" +
			"  storage:\n    match: {macaddress: \"0a:00:00:00:00:01\"}\n    addresses: [10.0.0.5/24]\n", []int{1}},
		{"under network", "network:\n  version: 2\n  ethernets:\n    nic-0: {match: {macaddress: \"0a:00:00:00:00:01\"}, dhcp4: true}\n", []int{0}},
		{"by name", "version: 2\nethernets:\n  eth0: {dhcp4: true}\n", nil},
		{"no dhcp4", "version: 2\nethernets:\n  nic-0: {match: {macaddress: \"0a:00:00:00:00:01\"}, dhcp4: false}\n", nil},
		{"version 1", "version: 1\nconfig:\n  - {type: physical, mac_address: \"0a:00:00:00:00:01\", subnets: [{type: dhcp}]}\n", nil},
		{"not YAML", "{", nil},
	} {
		if got := DHCPNICs([]byte(tc.doc), macs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
