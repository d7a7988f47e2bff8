package objects

import (
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func FuzzParseConfig(f *testing.F) {
	f.Add(`{"disks":[{"imageName":"a","size":1}]}`, `{"interfaces":[{"networkName":"n"}]}`, `{"vGPURequests":[]}`, `{"nodeAffinity":{}}`)
	f.Add(`{"disks":[{"size":"x"}]}`, `{"interfaces":{}}`, `[`, `{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{}]}}`)
	f.Add("", "", "", "e30=")
	f.Fuzz(func(t *testing.T, disks, nics, vgpus, affinity string) {
		o := configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, disks, config.FlagNetworkInfo, nics, config.FlagVGPUInfo, vgpus, config.FlagVMAffinity, affinity)
		cfg, m, err := ParseConfig("m", o)
		if (cfg == nil) == (err == nil) || (m == nil) != (cfg == nil) {
			t.Fatalf("ParseConfig must return a config and its machine or an error, got %v, %v and %v", cfg, m, err)
		}
		if cfg != nil {
			if _, err := vmFor(cfg); err != nil {
				t.Fatalf("a valid config does not build: %v", err)
			}
		}
	})
}

// factsFor returns facts that satisfy every image and data Secret of cfg.
func factsFor(cfg *config.Config) Facts {
	f := Facts{ImageStorageClasses: map[config.Ref]string{}}
	for _, d := range cfg.Disks {
		if d.Image != nil {
			f.ImageStorageClasses[*d.Image] = "longhorn-" + d.Image.Name
		}
	}
	if cfg.UserDataSecret != nil {
		f.UserData = &config.SecretValue{Key: "userdata", Data: []byte("#cloud-config\n")}
	}
	if cfg.NetworkDataSecret != nil {
		f.NetworkData = &config.SecretValue{Key: "networkdata", Data: []byte("version: 2\n")}
	}
	return f
}

// vmFor builds cfg's VM as a create sends it: completed with factsFor's facts and claim suffix abcde, with each
// range's first address of a pool.
func vmFor(cfg *config.Config) (*kubevirtv1.VirtualMachine, error) {
	m, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	if m, err = m.Complete(factsFor(cfg), Draw{ClaimSuffix: "abcde"}); err != nil {
		return nil, err
	}
	var addrs []*StaticAddress
	if m.Addresses != nil {
		addrs = m.Addresses.First()
	}
	_, vm, err := m.Objects(Learned{SSHKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3Ir0Yd3GLjVfVKTXOzYHTiEx+UHTNvJnRyTFBkdGvS driver", Addresses: addrs})
	return vm, err
}
