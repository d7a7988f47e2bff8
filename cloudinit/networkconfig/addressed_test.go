package networkconfig

import (
	"reflect"
	"testing"
)

// Entries that give static addresses are listed with the NICs they match by MAC address, nil when they may match
// any NIC; DHCP-only entries are not listed.
func TestStaticallyAddressed(t *testing.T) {
	const mac0, mac1 = "52:54:00:aa:bb:01", "52:54:00:aa:bb:02"
	for _, c := range []struct {
		name, doc string
		want      []Addressed
	}{
		{"empty", "", nil},
		{"dhcp only", "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n", nil},
		{"v2 by MAC, upper case", "network:\n  version: 2\n  ethernets:\n    nic:\n      match: {macaddress: '52:54:00:AA:BB:01'}\n      addresses: [10.0.0.5/24]\n",
			[]Addressed{{Path: "network.ethernets.nic", MACs: []string{mac0}}}},
		{"v2 by name", "version: 2\nethernets:\n  eth1:\n    addresses: [10.0.0.5/24]\n  eth0:\n    dhcp4: true\n",
			[]Addressed{{Path: "ethernets.eth1"}}},
		{"v2 by driver", "version: 2\nethernets:\n  e:\n    match: {driver: virtio_net}\n    addresses: ['fd00::5/64']\n",
			[]Addressed{{Path: "ethernets.e"}}},
		{"v2 bond of MAC-matched NICs", "version: 2\nethernets:\n  a: {match: {macaddress: '" + mac0 + "'}}\n  b: {match: {macaddress: '" + mac1 + "'}}\n" +
			"bonds:\n  bond0:\n    interfaces: [a, b]\n    addresses: [10.0.0.5/24]\n",
			[]Addressed{{Path: "bonds.bond0", MACs: []string{mac0, mac1}}}},
		{"v2 bridge over a NIC matched by name", "version: 2\nethernets:\n  a: {match: {macaddress: '" + mac0 + "'}}\n  eth1: {}\n" +
			"bridges:\n  br0:\n    interfaces: [a, eth1]\n    addresses: [10.0.0.5/24]\n",
			[]Addressed{{Path: "bridges.br0"}}},
		{"v2 VLAN on a MAC-matched NIC", "version: 2\nethernets:\n  a: {match: {macaddress: '" + mac1 + "'}}\n" +
			"vlans:\n  v10:\n    id: 10\n    link: a\n    addresses: [10.0.10.5/24]\n",
			[]Addressed{{Path: "vlans.v10", MACs: []string{mac1}}}},
		{"v1 physical by MAC, and by name", "version: 1\nconfig:\n- type: physical\n  name: eth0\n  mac_address: '" + mac0 + "'\n  subnets: [{type: static, address: 10.0.0.5/24}]\n" +
			"- type: physical\n  name: eth1\n  subnets: [{type: dhcp}, {type: static6, address: 'fd00::5/64'}]\n- type: physical\n  name: eth2\n  subnets: [{type: dhcp}]\n",
			[]Addressed{{Path: "config[0]", MACs: []string{mac0}}, {Path: "config[1]"}}},
		{"v1 bond", "version: 1\nconfig:\n- type: bond\n  name: bond0\n  mac_address: '" + mac0 + "'\n  bond_interfaces: [eth0]\n  params: {bond-mode: active-backup}\n  subnets: [{type: static, address: 10.0.0.5/24}]\n",
			[]Addressed{{Path: "config[0]"}}},
	} {
		if err := Validate([]byte(c.doc)); err != nil {
			t.Fatalf("%s: the case's document is invalid: %v", c.name, err)
		}
		got, err := StaticallyAddressed([]byte(c.doc))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
