package config_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	corev1 "k8s.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func TestParseMinimal(t *testing.T) {
	cfg, err := ParseConfig("gc8-pool1-q99l7-6ndw9", configtest.MinimalOptions())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "default" || cfg.CPUs != 2 || cfg.MemoryGiB != 4 || cfg.ReservedMemoryMiB != 0 {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if len(cfg.Disks) != 1 || cfg.Disks[0].Image == nil || *cfg.Disks[0].Image != (Ref{"default", "ubuntu"}) ||
		cfg.Disks[0].SizeGiB != 40 || cfg.Disks[0].Bus != "virtio" || cfg.Disks[0].BootOrder != 1 ||
		cfg.Disks[0].AccessMode != corev1.ReadWriteMany || cfg.Disks[0].VolumeMode != corev1.PersistentVolumeBlock {
		t.Errorf("legacy disk: %+v", cfg.Disks)
	}
	if len(cfg.NICs) != 1 || cfg.NICs[0].Network == nil || cfg.NICs[0].Network.String() != "default/vlan1" || cfg.NICs[0].Model != "virtio" {
		t.Errorf("legacy NIC: %+v", cfg.NICs)
	}
	if !cfg.InstallGuestAgent || cfg.CreateTimeout != 15*time.Minute {
		t.Errorf("guest agent %v, timeout %v", cfg.InstallGuestAgent, cfg.CreateTimeout)
	}
}

func TestParseAcceptsReferenceFormats(t *testing.T) {
	aff := `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a"]}]}]}}}`
	o := configtest.With(DefaultOptions(),
		FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","storageClassName":"","size":40,"bootOrder":1,"bus":"virtio","type":"disk","hotPlugAble":false},{"storageClassName":"longhorn","size":"10","bus":"scsi","accessMode":"ReadWriteOnce","volumeMode":"Filesystem"}]}`,
		FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vm-untag","macAddress":"","model":"virtio","type":"bridge"},{"networkName":"vlan2","macAddress":"52:54:00:AB:CD:EF","model":"e1000","type":"bridge"}]}`,
		FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`,
		// Rancher's UI sends affinity base64-encoded.
		FlagVMAffinity, base64.StdEncoding.EncodeToString([]byte(aff)),
		FlagKubeconfigContent, base64.StdEncoding.EncodeToString([]byte(configtest.Kubeconfig)),
		FlagReservedMemorySize, 256,
	)
	cfg, err := ParseConfig("m1", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Disks) != 2 || cfg.Disks[1].SizeGiB != 10 || cfg.Disks[1].Image != nil || cfg.Disks[1].StorageClass != "longhorn" ||
		cfg.Disks[1].AccessMode != corev1.ReadWriteOnce || cfg.Disks[1].VolumeMode != corev1.PersistentVolumeFilesystem || cfg.Disks[1].Name != "disk-1" {
		t.Errorf("disks: %+v", cfg.Disks)
	}
	if cfg.NICs[1].Network.String() != "default/vlan2" || cfg.NICs[1].MACAddress != "52:54:00:ab:cd:ef" || cfg.NICs[1].Name != "nic-1" {
		t.Errorf("NICs: %+v", cfg.NICs)
	}
	if cfg.Affinity == nil || cfg.Affinity.NodeAffinity == nil {
		t.Errorf("affinity not decoded from base64: %+v", cfg.Affinity)
	}
	if string(cfg.Kubeconfig) != configtest.Kubeconfig {
		t.Errorf("kubeconfig not decoded from base64")
	}
	if cfg.ReservedMemoryMiB != 256 || len(cfg.VGPUs) != 1 {
		t.Errorf("reserved %d, vgpus %v", cfg.ReservedMemoryMiB, cfg.VGPUs)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name    string
		machine string
		opts    Options
		flag    string
		want    string
	}{
		{"zero cpus", "m", configtest.With(configtest.MinimalOptions(), FlagCPUCount, 0), FlagCPUCount, "must be a positive whole number of cores, got 0"},
		{"negative memory", "m", configtest.With(configtest.MinimalOptions(), FlagMemorySize, -4), FlagMemorySize, "positive whole number of GiB, got -4"},
		{"zero legacy disk", "m", configtest.With(configtest.MinimalOptions(), FlagDiskSize, 0), FlagDiskSize, "must be a positive whole number of GiB"},
		{"zero disk in disk-info", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":40},{"storageClassName":"longhorn","size":0}]}`), FlagDiskInfo, "disks[1].size must be a positive whole number of GiB, got 0"},
		{"unknown legacy bus", "m", configtest.With(configtest.MinimalOptions(), FlagDiskBus, "ide"), FlagDiskBus, `must be one of virtio, scsi or sata, got "ide"`},
		{"unknown bus in disk-info", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":1,"bus":"usb"}]}`), FlagDiskInfo, `disks[0].bus must be one of virtio, scsi or sata, got "usb"`},
		{"virtio cd-rom", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":1},{"imageName":"iso","size":1,"type":"cd-rom","bus":"virtio"}]}`), FlagDiskInfo, "disks[1].bus virtio cannot carry a cd-rom"},
		{"unknown disk type", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":1,"type":"floppy"}]}`), FlagDiskInfo, `disks[0].type must be "disk" or "cd-rom"`},
		{"unknown access mode", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":1,"accessMode":"RWX"}]}`), FlagDiskInfo, `disks[0].accessMode must be one of ReadWriteMany`},
		{"disk without image or class", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"size":10}]}`), FlagDiskInfo, "disks[0] needs imageName"},
		{"duplicate boot order", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"a","size":1,"bootOrder":1},{"imageName":"b","size":1,"bootOrder":1}]}`), FlagDiskInfo, "disk-0 and disk-1 both have bootOrder 1"},
		{"no disks", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[]}`), FlagDiskInfo, "at least one disk"},
		{"disk-info not JSON", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"size":40,}]}`), FlagDiskInfo, "is not valid JSON"},
		{"disk size not a number", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"a","size":"forty"}]}`), FlagDiskInfo, `disks[0]: size must be a whole number, got "forty"`},
		{"disks not a list", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":{"size":1}}`), FlagDiskInfo, "disks must be a JSON list"},
		{"unknown NIC model", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkModel, "virtio-net"), FlagNetworkModel, `must be one of virtio, e1000`},
		{"unknown network type", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","type":"sriov"}]}`), FlagNetworkInfo, `interfaces[0].type must be "bridge" or "masquerade", got "sriov"`},
		{"bad MAC", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","macAddress":"52:54:00:zz:00:01"}]}`), FlagNetworkInfo, `interfaces[0].macAddress must be a MAC address like 52:54:00:12:34:56, got "52:54:00:zz:00:01"`},
		{"multicast MAC", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","macAddress":"01:00:5e:00:00:01"}]}`), FlagNetworkInfo, "is a multicast address"},
		{"NIC without network", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"model":"virtio"}]}`), FlagNetworkInfo, "interfaces[0].networkName is required for a bridge interface"},
		{"masquerade with network", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","type":"masquerade"}]}`), FlagNetworkInfo, "must be empty for a masquerade interface"},
		{"two masquerade NICs", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"type":"masquerade"},{"networkName":"vlan1"},{"type":"masquerade"}]}`), FlagNetworkInfo, "nic-0 and nic-2 are both masquerade interfaces"},
		{"network-info not JSON", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `interfaces: []`), FlagNetworkInfo, "is not valid JSON"},
		{"no legacy network", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkName, ""), FlagNetworkName, "is required when --harvester-network-info is not given"},
		{"vgpu-info not JSON", "m", configtest.With(configtest.MinimalOptions(), FlagVGPUInfo, `[gpu]`), FlagVGPUInfo, "is not valid JSON"},
		{"vgpu without device", "m", configtest.With(configtest.MinimalOptions(), FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1"}]}`), FlagVGPUInfo, "vGPURequests[0].deviceName is required"},
		{"affinity not JSON", "m", configtest.With(configtest.MinimalOptions(), FlagVMAffinity, `nodeAffinity: {}`), FlagVMAffinity, "is not valid JSON"},
		{"affinity unknown operator", "m", configtest.With(configtest.MinimalOptions(), FlagVMAffinity, `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"Equals","values":["a"]}]}]}}}`), FlagVMAffinity, `nodeSelectorTerms[0].matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist, Gt or Lt, got "Equals"`},
		{"affinity misspelt field", "m", configtest.With(configtest.MinimalOptions(), FlagVMAffinity, `{"nodeAfinity":{}}`), FlagVMAffinity, `has an unknown field "nodeAfinity"`},
		{"affinity weight out of range", "m", configtest.With(configtest.MinimalOptions(), FlagVMAffinity, `{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":200,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchExpressions":[{"key":"app","operator":"In"}]}}}]}}`), FlagVMAffinity, "weight must be between 1 and 100, got 200"},
		{"bad namespace", "m", configtest.With(configtest.MinimalOptions(), FlagVMNamespace, "Team_A"), FlagVMNamespace, `must be a Kubernetes namespace name`},
		{"bad image ref", "m", configtest.With(configtest.MinimalOptions(), FlagImageName, "a/b/c"), FlagImageName, "more than one /"},
		{"bad image namespace", "m", configtest.With(configtest.MinimalOptions(), FlagImageName, "Default/ubuntu"), FlagImageName, `namespace "Default" of "Default/ubuntu" is not a valid namespace name`},
		{"empty ref namespace", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkName, "/vlan1"), FlagNetworkName, "empty namespace"},
		{"reserved memory too large", "m", configtest.With(configtest.MinimalOptions(), FlagReservedMemorySize, 4096), FlagReservedMemorySize, "4096 MiB must be less than the VM memory (4 GiB = 4096 MiB)"},
		{"reserved memory negative", "m", configtest.With(configtest.MinimalOptions(), FlagReservedMemorySize, -5), FlagReservedMemorySize, "or -1 for Harvester's default"},
		{"secure boot without EFI", "m", configtest.With(configtest.MinimalOptions(), FlagEnableSecureBoot, true), FlagEnableSecureBoot, "needs --harvester-enable-efi"},
		{"emulator thread without pinning", "m", configtest.With(configtest.MinimalOptions(), FlagIsolateEmulatorThread, true), FlagIsolateEmulatorThread, "needs --harvester-cpu-pinning"},
		{"key pair without key", "m", configtest.With(configtest.MinimalOptions(), FlagKeyPairName, "default/mykey"), FlagKeyPairName, "needs --harvester-ssh-private-key-path"},
		{"missing private key", "m", configtest.With(configtest.MinimalOptions(), FlagSSHPrivateKeyPath, "/nonexistent/id_rsa"), FlagSSHPrivateKeyPath, `no file at "/nonexistent/id_rsa"`},
		{"ssh port zero", "m", configtest.With(configtest.MinimalOptions(), FlagSSHPort, 0), FlagSSHPort, "between 1 and 65535, got 0"},
		{"ssh port too high", "m", configtest.With(configtest.MinimalOptions(), FlagSSHPort, 70000), FlagSSHPort, "between 1 and 65535, got 70000"},
		{"bad ssh user", "m", configtest.With(configtest.MinimalOptions(), FlagSSHUser, "Admin User"), FlagSSHUser, "must be a Linux user name"},
		{"kubeconfig not YAML", "m", configtest.With(configtest.MinimalOptions(), FlagKubeconfigContent, "{not: [a kubeconfig"), FlagKubeconfigContent, "is not a kubeconfig"},
		{"kubeconfig without context", "m", configtest.With(configtest.MinimalOptions(), FlagKubeconfigContent, "apiVersion: v1\nkind: Config\nclusters: []\n"), FlagKubeconfigContent, "it sets no current-context"},
		{"kubeconfig without a server", "m", configtest.With(configtest.MinimalOptions(), FlagKubeconfigContent, "apiVersion: v1\nkind: Config\nclusters: [{name: h, cluster: {}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: h, context: {cluster: h, user: u}}]\ncurrent-context: h\n"), FlagKubeconfigContent, "is not a usable kubeconfig"},
		{"cluster name not a label", "m", configtest.With(configtest.MinimalOptions(), FlagClusterName, "my cluster"), FlagClusterName, "must be a valid label value"},
		{"zero timeout", "m", configtest.With(configtest.MinimalOptions(), FlagCreateTimeout, "0"), FlagCreateTimeout, "positive whole number of seconds"},
		{"persistent TPM without TPM", "m", configtest.With(configtest.MinimalOptions(), FlagPersistentTPM, true), FlagPersistentTPM, "needs --harvester-enable-tpm"},
		{"machine type i440fx", "m", configtest.With(configtest.MinimalOptions(), FlagMachineType, "pc-i440fx-9.0"), FlagMachineType,
			`must be a machine type KubeVirt emulates: q35 or pc-q35-<version> on x86_64 hosts (e.g. pc-q35-rhel9.6.0), virt or virt-<version> on arm64 hosts; got "pc-i440fx-9.0"`},
		{"machine type markup", "m", configtest.With(configtest.MinimalOptions(), FlagMachineType, "q35'/><x"), FlagMachineType, "must be a machine type KubeVirt emulates"},
		{"disk cache mode", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":10,"cache":"unsafe"}]}`), FlagDiskInfo,
			`disks[0].cache must be one of none, writethrough or writeback (KubeVirt's disk cache modes), or empty for KubeVirt's choice, got "unsafe"`},
		{"NIC boot order negative", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":-1}]}`), FlagNetworkInfo,
			"interfaces[0].bootOrder must be 0 (not bootable) or a positive whole number, got -1"},
		{"NIC boot order too large", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":2147483648}]}`), FlagNetworkInfo,
			"interfaces[0].bootOrder must be at most 2147483647"},
		// The legacy root disk boots first (order 1).
		{"NIC boot order of the legacy disk", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":1}]}`), FlagNetworkInfo,
			"nic-0 has bootOrder 1, as disk-0 of --harvester-image-name has; boot orders must be unique across disks and NICs"},
		{"NIC boot order of a disk", "m", configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":10,"bootOrder":2}]}`,
			FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":3},{"networkName":"vlan2","bootOrder":"2"}]}`), FlagNetworkInfo,
			"nic-1 has bootOrder 2, as disk-0 of --harvester-disk-info has"},
		{"two NICs one boot order", "m", configtest.With(configtest.MinimalOptions(), FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1","bootOrder":3},{"networkName":"vlan2","bootOrder":3}]}`), FlagNetworkInfo,
			"nic-1 has bootOrder 3, as nic-0 of --harvester-network-info has"},
		{"uppercase machine name", "Node1", configtest.MinimalOptions(), "", "cannot name a Harvester VM"},
		{"machine name too long", strings.Repeat("a", 64), configtest.MinimalOptions(), "", "is 64 characters long; Harvester VM names are at most 63"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(tt.machine, tt.opts)
			var cerr *ConfigError
			if !errors.As(err, &cerr) {
				t.Fatalf("want a *ConfigError, got %v", err)
			}
			for _, p := range cerr.Problems {
				if p.Flag == tt.flag && strings.Contains(p.Message, tt.want) {
					return
				}
			}
			t.Fatalf("no problem on %q containing %q; got:\n%v", tt.flag, tt.want, err)
		})
	}
}

func TestParsePrivateKeys(t *testing.T) {
	if _, err := ParseConfig("m", configtest.With(configtest.MinimalOptions(), FlagSSHPrivateKeyPath, configtest.WriteKey(t, false), FlagKeyPairName, "mykey")); err != nil {
		t.Fatalf("a readable unencrypted key is accepted: %v", err)
	}
	_, err := ParseConfig("m", configtest.With(configtest.MinimalOptions(), FlagSSHPrivateKeyPath, configtest.WriteKey(t, true)))
	if err == nil || !strings.Contains(err.Error(), "is protected by a passphrase") {
		t.Fatalf("want a passphrase error, got %v", err)
	}
	notAKey := filepath.Join(t.TempDir(), "key")
	os.WriteFile(notAKey, []byte("hello"), 0o600)
	if _, err := ParseConfig("m", configtest.With(configtest.MinimalOptions(), FlagSSHPrivateKeyPath, notAKey)); err == nil || !strings.Contains(err.Error(), "is not an SSH private key") {
		t.Fatalf("want a not-a-key error, got %v", err)
	}
}

func TestParseReportsAllProblemsAtOnce(t *testing.T) {
	o := configtest.With(DefaultOptions(), FlagCPUCount, 0, FlagMemorySize, 0, FlagSSHPort, 0,
		FlagEnableSecureBoot, true, FlagVMAffinity, "{", FlagDiskInfo, `{"disks":[{"size":0}]}`)
	_, err := ParseConfig("m", o)
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a *ConfigError, got %v", err)
	}
	flags := map[string]bool{}
	for _, p := range cerr.Problems {
		flags[p.Flag] = true
	}
	for _, f := range []string{FlagCPUCount, FlagMemorySize, FlagSSHPort, FlagEnableSecureBoot, FlagVMAffinity, FlagDiskInfo, FlagNetworkName} {
		if !flags[f] {
			t.Errorf("no problem reported for --%s", f)
		}
	}
	if !strings.Contains(err.Error(), "--harvester-cpu-count: must be") || !strings.HasPrefix(err.Error(), "invalid machine configuration (") {
		t.Errorf("message: %v", err)
	}
}

func TestKubeconfigNeverQuotedInErrors(t *testing.T) {
	secret := "s3cr3t-token-value"
	bad := "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: " + secret + "}\ncontexts: [{name: c, context: {cluster: missing, user: u}}]\ncurrent-context: c\n"
	_, err := ParseConfig("m", configtest.With(configtest.MinimalOptions(), FlagKubeconfigContent, bad))
	if err == nil {
		t.Fatal("a kubeconfig whose context names a missing cluster is accepted")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error quotes the credential: %v", err)
	}
}

// cloudinit's errors say which part of its input is at fault; each is filed under that part's flag, all at once.
func TestParseFilesCloudInitProblemsUnderTheirFlags(t *testing.T) {
	_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(),
		FlagUserData, "#cloud-config\nruncmd: [a\n",
		FlagCloudConfig, "#cloud-config\nhostname: [a]\n",
		FlagSSHPassword, "a\nb",
		FlagNetworkData, "version: 3"))
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	want := map[string]string{
		FlagUserData:    "not valid YAML: line ",
		FlagCloudConfig: "hostname: must be a non-empty string",
		FlagSSHPassword: "contains a line break or NUL, which chpasswd cannot set",
		FlagNetworkData: "version: must be the number 1 or 2, not 3",
	}
	for _, p := range cerr.Problems {
		if prefix, ok := want[p.Flag]; ok && strings.HasPrefix(p.Message, prefix) {
			delete(want, p.Flag)
		}
	}
	if len(want) > 0 {
		t.Errorf("not filed under their flags: %v\n%v", want, err)
	}
}
