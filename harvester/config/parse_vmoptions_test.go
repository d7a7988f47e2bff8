package config_test

import (
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// Persistent TPM, the machine type, disk cache modes and NIC boot orders parse into the Config; every accepted
// value of each is taken.
func TestParseVMOptions(t *testing.T) {
	cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(),
		FlagEnableTPM, true, FlagPersistentTPM, true, FlagMachineType, " q35 ",
		FlagDiskInfo, `{"disks":[{"imageName":"img","size":10,"bootOrder":2,"cache":"none"},{"storageClassName":"sc","size":1,"cache":"writethrough"},{"storageClassName":"sc","size":1,"cache":"writeback"},{"storageClassName":"sc","size":1}]}`,
		FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":1},{"networkName":"vlan2"}]}`))
	if problems != "" {
		t.Fatal(problems)
	}
	if !cfg.TPM || !cfg.TPMPersistent || cfg.MachineType != "q35" {
		t.Errorf("TPM %v, persistent %v, machine type %q", cfg.TPM, cfg.TPMPersistent, cfg.MachineType)
	}
	for i, want := range []string{"none", "writethrough", "writeback", ""} {
		if cfg.Disks[i].Cache != want {
			t.Errorf("disk %d cache %q, want %q", i, cfg.Disks[i].Cache, want)
		}
	}
	if cfg.NICs[0].BootOrder != 1 || cfg.NICs[1].BootOrder != 0 {
		t.Errorf("NIC boot orders %d, %d", cfg.NICs[0].BootOrder, cfg.NICs[1].BootOrder)
	}
	for _, mt := range []string{"q35", "pc-q35-rhel9.6.0", "pc-q35-8.2", "virt", "virt-9.2"} {
		if cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagMachineType, mt)); problems != "" || cfg.MachineType != mt {
			t.Errorf("machine type %q: %s", mt, problems)
		}
	}
	for _, mt := range []string{"pc", "pc-q35", "q35-", "i440fx", "Q35", "virt-"} {
		if _, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagMachineType, mt)); problems == "" {
			t.Errorf("machine type %q is accepted", mt)
		}
	}
}
