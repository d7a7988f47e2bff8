package objects

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func FuzzParseConfig(f *testing.F) {
	f.Add(`{"disks":[{"imageName":"a","size":1}]}`, `{"interfaces":[{"networkName":"n"}]}`, `{"vGPURequests":[]}`, `{"nodeAffinity":{}}`)
	f.Add(`{"disks":[{"size":"x"}]}`, `{"interfaces":{}}`, `[`, `{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{}]}}`)
	f.Add("", "", "", "e30=")
	f.Fuzz(func(t *testing.T, disks, nics, vgpus, affinity string) {
		o := configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, disks, config.FlagNetworkInfo, nics, config.FlagVGPUInfo, vgpus, config.FlagVMAffinity, affinity)
		cfg, err := config.ParseConfig("m", o)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("ParseConfig must return a config or an error, got %v and %v", cfg, err)
		}
		if cfg != nil {
			if _, err := VirtualMachine(cfg, factsFor(cfg), "abcde"); err != nil {
				t.Fatalf("a valid config does not build: %v", err)
			}
		}
	})
}

// factsFor returns facts that satisfy every image of cfg.
func factsFor(cfg *config.Config) Facts {
	f := Facts{ImageStorageClasses: map[config.Ref]string{}}
	for _, d := range cfg.Disks {
		if d.Image != nil {
			f.ImageStorageClasses[*d.Image] = "longhorn-" + d.Image.Name
		}
	}
	if cfg.IPPool != nil {
		f.StaticAddress = StaticAddressFor(cfg, cfg.IPPool.FirstFree())
	}
	if cfg.IPPool6 != nil {
		f.StaticAddress6 = DualStatic(cfg, f.StaticAddress, cfg.IPPool6.FirstFree())
	}
	f.Lease = LeaseFor(cfg, "0123456789abcdef")
	return f
}
