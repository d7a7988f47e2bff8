package networkconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validNetworkData are the network-configs under testdata/network: each must pass Validate and
// cloud-init's own net-convert (TestNetworkDataAsCloudInitReadsIt).
func validNetworkData(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "network", "*"))
	if err != nil || len(files) < 5 {
		t.Fatalf("testdata/network: %v, %d files", err, len(files))
	}
	return files
}

func TestValidateAcceptsTestdata(t *testing.T) {
	for _, f := range validNetworkData(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// invalidNetworkData are network-configs Validate refuses, with the error it must give. Those with
// cloudInitFails set make cloud-init 22.4 itself fail (checked by TestNetworkDataAsCloudInitReadsIt).
var invalidNetworkData = []struct {
	name, doc, wantErr string
	first              bool // wantErr is the first problem: the error starts with it
	cloudInitFails     bool
}{
	{name: "not YAML", doc: "version: [1", wantErr: "not valid YAML or JSON", first: true},
	{name: "list", doc: "- a", wantErr: "must be a mapping with a version key, not a list", first: true},
	{name: "no version", doc: "config: []", wantErr: "version: is required (1 or 2)", first: true},
	{name: "version as a string", doc: "network:\n  version: \"1\"\n  config: []", wantErr: `network.version: must be the number 1 or 2, not "1"`},
	{name: "version 3", doc: "version: 3", wantErr: "version: must be the number 1 or 2, not 3"},
	{name: "v1 config not a list", doc: "version: 1\nconfig: {}", wantErr: "config: must be a list of entries"},
	{name: "v1 unknown type", doc: "version: 1\nconfig:\n  - type: ethernet\n    name: eth0\n",
		wantErr: `config[0].type: must be one of physical, bond, bridge, vlan, infiniband, loopback, nameserver, route`, cloudInitFails: true},
	{name: "v1 static without address", doc: "network:\n  version: 1\n  config:\n    - type: physical\n      name: eth0\n    - type: physical\n      name: eth1\n      subnets:\n        - type: static\n          gateway: 10.0.0.1\n",
		wantErr: "network.config[1].subnets[0].address: is required for a static subnet", first: true, cloudInitFails: true},
	{name: "v1 bad subnet type", doc: "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: dhcp5\n",
		wantErr: `config[0].subnets[0].type: must be one of static`, cloudInitFails: true},
	{name: "v1 bad address", doc: "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: static\n        address: 10.0.0.300/24\n",
		wantErr: `config[0].subnets[0].address: must be an IP address, optionally with /prefix`, cloudInitFails: true},
	{name: "v1 two IPv4 gateways", doc: "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - {type: static, address: 10.0.0.2/24, gateway: 10.0.0.1}\n  - type: physical\n    name: eth1\n    subnets:\n      - {type: static, address: 10.1.0.2/24, gateway: 10.1.0.1}\n",
		wantErr: "config[1].subnets[0].gateway: a second default gateway of the same address family (the first is config[0].subnets[0].gateway)"},
	{name: "v1 bad gateway", doc: "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - {type: static, address: 10.0.0.2/24, gateway: router}\n",
		wantErr: `config[0].subnets[0].gateway: must be an IP address`},
	{name: "v1 vlan without id", doc: "version: 1\nconfig:\n  - type: vlan\n    name: v1\n    vlan_link: eth0\n",
		wantErr: "config[0].vlan_id: is required for type vlan"},
	{name: "v1 vlan id out of range", doc: "version: 1\nconfig:\n  - {type: vlan, name: v1, vlan_link: eth0, vlan_id: 5000}\n",
		wantErr: "config[0].vlan_id: must be a VLAN id from 0 to 4094, not 5000"},
	{name: "v1 bad MAC", doc: "version: 1\nconfig:\n  - {type: physical, name: eth0, mac_address: 52-54-00}\n",
		wantErr: `config[0].mac_address: must be a MAC address like 52:54:00:12:34:56`},
	{name: "v1 nameserver for a missing interface", doc: "version: 1\nconfig:\n  - {type: physical, name: eth0}\n  - {type: nameserver, interface: eth9, address: 1.1.1.1}\n",
		wantErr: `config[1].interface: names no entry of config`, cloudInitFails: true},
	{name: "v1 nameserver address", doc: "version: 1\nconfig:\n  - {type: nameserver, address: [1.1.1.1, dns.example.com]}\n",
		wantErr: `config[0].address[1]: must be an IP address`},
	{name: "v1 bridge_stp", doc: "version: 1\nconfig:\n  - {type: physical, name: eth0}\n  - {type: bridge, name: br0, bridge_interfaces: [eth0], params: {bridge_stp: maybe}}\n",
		wantErr: `config[1].params.bridge_stp: must be on, off, 0, 1 or a boolean`, cloudInitFails: true},
	{name: "v1 route destination", doc: "version: 1\nconfig:\n  - {type: route, destination: nowhere}\n",
		wantErr: `config[0].destination: must be a network like 10.0.0.0/8`, cloudInitFails: true},
	{name: "v2 unknown section", doc: "version: 2\nethernet:\n  eth0: {dhcp4: true}\n",
		wantErr: "ethernet: unknown section; cloud-init renders ethernets, bonds, bridges, vlans and wifis"},
	{name: "v2 address without prefix", doc: "version: 2\nethernets:\n  eth0:\n    addresses: [192.168.1.5]\n",
		wantErr: `ethernets.eth0.addresses[0]: must be an address with its prefix length, like 192.0.2.10/24`},
	{name: "v2 gateway4 of the wrong family", doc: "version: 2\nethernets:\n  eth0:\n    gateway4: 2001:db8::1\n",
		wantErr: `ethernets.eth0.gateway4: is not an IPv4 address`},
	{name: "v2 dhcp4 not a boolean", doc: "version: 2\nethernets:\n  eth0:\n    dhcp4: sure\n",
		wantErr: `ethernets.eth0.dhcp4: must be true or false`},
	{name: "v2 bond without interfaces", doc: "version: 2\nbonds:\n  bond0:\n    parameters: {mode: active-backup}\n",
		wantErr: "bonds.bond0.interfaces: is required", cloudInitFails: true},
	{name: "v2 bond parameter cloud-init cannot translate", doc: "version: 2\nethernets:\n  eth0: {}\nbonds:\n  bond0:\n    interfaces: [eth0]\n    parameters:\n      all-slaves-active: true\n",
		wantErr: "bonds.bond0.parameters.all-slaves-active: not a bond parameter cloud-init knows", cloudInitFails: true},
	{name: "v2 bond member not defined", doc: "version: 2\nbonds:\n  bond0:\n    interfaces: [eth7]\n",
		wantErr: `bonds.bond0.interfaces[0]: names no device of this config`},
	{name: "v2 vlan without link", doc: "version: 2\nvlans:\n  v100:\n    id: 100\n",
		wantErr: "vlans.v100.link: is required"},
	{name: "v2 route to default", doc: "version: 2\nethernets:\n  eth0:\n    routes:\n      - to: default\n        via: 10.0.0.1\n",
		wantErr: "ethernets.eth0.routes[0].to: write 0.0.0.0/0 (or ::/0)", cloudInitFails: true},
	{name: "v2 route via", doc: "version: 2\nethernets:\n  eth0:\n    routes:\n      - {to: 10.0.0.0/8, via: gw}\n",
		wantErr: `ethernets.eth0.routes[0].via: must be an IP address`},
	{name: "several problems in one error", doc: "version: 2\nethernets:\n  eth0: {dhcp4: x, dhcp6: y, mtu: -1, gateway4: a, gateway6: b, macaddress: c}\n",
		wantErr: "; and 1 more"},
	{name: "alias cycle", doc: "version: 1\nconfig: &c\n  - *c\n", wantErr: "an alias refers to a node that contains it"},
}

func TestValidateRefuses(t *testing.T) {
	for _, tt := range invalidNetworkData {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || (tt.first && !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want an error containing %q (first: %v)", err, tt.wantErr, tt.first)
			}
			var verr *Error
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("error %q is not an *Error with its problems", err)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, doc := range []string{
		"", "  \n", "# comments only\n",
		"network:\n  config: disabled\n", // net.is_disabled_cfg
		"version: 1\nconfig: []\n",
		`{"version": 1, "config": [{"type": "physical", "name": "eth0", "subnets": [{"type": "dhcp"}]}]}`,
		"version: 2\nethernets:\n  eth0:\n    dhcp4: yes\n", // PyYAML reads yes as true
		"version: 2\ntunnels:\n  he:\n    mode: sit\n",      // netplan-only sections pass unchecked
		"version: 1\nconfig:\n  - {type: physical, name: eth0, subnets: [{type: static, address: 10.0.0.2, netmask: 255.255.255.0, gateway: 10.0.0.1}, {type: static6, address: 'fd00::2/64', gateway: 'fd00::1'}]}\n",
	} {
		if err := Validate([]byte(doc)); err != nil {
			t.Errorf("Validate(%q) = %v", doc, err)
		}
	}
}

func TestIsNetworkData(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"version: 2\nethernets: {}\n", true},
		{`{"version": 1, "config": []}`, true},
		{"network:\n  version: 1\n", true},
		{"", false},
		{"- a", false},
		{"just text", false},
		{"a: [", false},
	}
	for _, tt := range tests {
		if got := IsNetworkData([]byte(tt.in)); got != tt.want {
			t.Errorf("IsNetworkData(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
