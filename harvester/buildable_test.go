package harvester

import "testing"

func FuzzParseConfig(f *testing.F) {
	f.Add(`{"disks":[{"imageName":"a","size":1}]}`, `{"interfaces":[{"networkName":"n"}]}`, `{"vGPURequests":[]}`, `{"nodeAffinity":{}}`)
	f.Add(`{"disks":[{"size":"x"}]}`, `{"interfaces":{}}`, `[`, `{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{}]}}`)
	f.Add("", "", "", "e30=")
	f.Fuzz(func(t *testing.T, disks, nics, vgpus, affinity string) {
		o := with(minimalOptions(), FlagDiskInfo, disks, FlagNetworkInfo, nics, FlagVGPUInfo, vgpus, FlagVMAffinity, affinity)
		cfg, err := ParseConfig("m", o)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("ParseConfig must return a config or an error, got %v and %v", cfg, err)
		}
		if cfg != nil {
			if _, err := BuildVirtualMachine(cfg, factsFor(cfg), "abcde"); err != nil {
				t.Fatalf("a valid config does not build: %v", err)
			}
		}
	})
}

// factsFor returns facts that satisfy every image of cfg.
func factsFor(cfg *Config) Facts {
	f := Facts{ImageStorageClasses: map[Ref]string{}}
	for _, d := range cfg.Disks {
		if d.Image != nil {
			f.ImageStorageClasses[*d.Image] = "longhorn-" + d.Image.Name
		}
	}
	if cfg.IPPool != nil {
		f.StaticAddress = staticAddressFor(cfg, cfg.IPPool.first())
	}
	return f
}
