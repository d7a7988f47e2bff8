package config_test

import (
	"errors"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// --harvester-ip-pool-name names an IPPool of Harvester's managed DHCP: namespace/name, or a name in the first
// NIC's network's namespace, where Harvester makes a VM network's pool.
func TestParseLeasePool(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
		want Ref
	}{
		{"namespace/name", poolOptions(FlagIPPoolName, " net-ns/vlan1 "), Ref{Namespace: "net-ns", Name: "vlan1"}},
		{"name, in the network's namespace", configtest.With(configtest.MinimalOptions(), FlagVMNamespace, "team-a",
			FlagNetworkName, "net-ns/vlan1", FlagIPPoolName, "vlan1"), Ref{Namespace: "net-ns", Name: "vlan1"}},
		{"name, with the network in the VM namespace", configtest.With(configtest.MinimalOptions(), FlagVMNamespace, "team-a",
			FlagNetworkName, "vlan1", FlagIPPoolName, "pool1"), Ref{Namespace: "team-a", Name: "pool1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("m1", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LeasePool == nil || *cfg.LeasePool != tt.want || cfg.IPPool != nil {
				t.Errorf("LeasePool %v (range pool %v), want %v", cfg.LeasePool, cfg.IPPool, tt.want)
			}
		})
	}
	cfg, err := ParseConfig("m1", poolOptions())
	if err != nil || cfg.LeasePool != nil {
		t.Errorf("without the flag: LeasePool %v (%v), want none", cfg.LeasePool, err)
	}
}

// Each problem of --harvester-ip-pool-name is told under the flag to change, with what to do.
func TestLeasePoolProblems(t *testing.T) {
	const masquerade = `{"interfaces":[{"type":"masquerade"},{"networkName":"default/vlan1"}]}`
	for _, tt := range []struct {
		name string
		opts Options
		flag string
		want []string
	}{
		{"not a reference", poolOptions(FlagIPPoolName, "a/b/c"), FlagIPPoolName, []string{"must be namespace/name or name", "more than one /"}},
		{"with a range", poolOptions(FlagIPPoolName, "vlan1", FlagIPPool, "10.0.0.10-10.0.0.20/24"), FlagIPPoolName,
			[]string{"cannot go with --harvester-ip-pool", "drop one of the two"}},
		{"on a masquerade NIC", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkInfo, masquerade), FlagIPPoolName,
			[]string{"cannot lease an address to the first NIC: nic-0 is a masquerade interface on the pod network", "a bridge on a VM network"}},
		{"a MAC address for every machine", poolOptions(FlagIPPoolName, "vlan1",
			FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vlan1","macAddress":"52:54:00:00:00:01"}]}`), FlagNetworkInfo,
			[]string{"nic-0: macAddress 52:54:00:00:00:01 cannot go with --harvester-ip-pool-name", "the driver derives one for each machine"}},
		{"version 1 network data", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkData, "version: 1\nconfig:\n- type: physical\n  name: eth1\n"), FlagNetworkData,
			[]string{"is version 1; with --harvester-ip-pool-name write it as version 2, to which the driver adds the first NIC's DHCP entry"}},
		{"network data matching by name", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkData, "version: 2\nethernets:\n  eth1:\n    dhcp4: true\n"), FlagNetworkData,
			[]string{"ethernets.eth1 is not matched by macaddress: with --harvester-ip-pool-name"}},
		{"network data disabled", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkData, "network:\n  config: disabled\n"), FlagNetworkData,
			[]string{"disables networking (config: disabled), so the guest would not take --harvester-ip-pool-name's lease"}},
		{"a network-data Secret", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkDataSecret, "net"), FlagNetworkDataSecret,
			[]string{"cannot go with --harvester-ip-pool-name, which writes the first NIC's DHCP entry"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("m1", tt.opts)
			var cerr *ConfigError
			if !errors.As(err, &cerr) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			for _, p := range cerr.Problems {
				if p.Flag == tt.flag {
					configtest.WantAll(t, p.Message, tt.want...)
					return
				}
			}
			t.Errorf("no problem under --%s: %v", tt.flag, err)
		})
	}
	// Network data that matches its entries by MAC address goes with a lease.
	if _, err := ParseConfig("m1", poolOptions(FlagIPPoolName, "vlan1", FlagNetworkData,
		"version: 2\nethernets:\n  storage:\n    match: {macaddress: '52:54:00:00:00:02'}\n    dhcp4: true\n")); err != nil {
		t.Errorf("network data matched by MAC address: %v", err)
	}
}
