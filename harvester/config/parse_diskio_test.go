package config_test

import (
	"errors"
	"strings"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// A machine config written for the reference driver's disk performance options (harvester/
// docker-machine-driver-harvester harvester/config.go and flags.go at 6092ec41: the disk keys io and
// dedicatedIOThread, the flags block-multi-queue, io-threads-policy and io-thread-count) is read into the Config;
// its io-thread-count is an int flag there, which Rancher sends as "0" when it is not set.
func TestParseDiskIO(t *testing.T) {
	cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(),
		FlagDiskInfo, `{"disks":[{"imageName":"img","size":10,"bootOrder":1,"bus":"virtio","type":"disk","hotPlugAble":false,"cache":"none","io":"native","dedicatedIOThread":true},`+
			`{"storageClassName":"sc","size":1,"bus":"scsi","cache":"writeback","io":"threads"},{"storageClassName":"sc","size":1}]}`,
		FlagBlockMultiQueue, true, FlagIOThreadsPolicy, "supplementalPool", FlagIOThreadCount, "4",
		FlagEnableEFI, true, FlagPersistentEFI, true))
	if problems != "" {
		t.Fatal(problems)
	}
	want := []struct {
		io        string
		dedicated bool
	}{{"native", true}, {"threads", false}, {"", false}}
	for i, w := range want {
		if d := cfg.Disks[i]; d.IO != w.io || d.DedicatedIOThread != w.dedicated {
			t.Errorf("disk %d: io %q, dedicated I/O thread %v; want %q, %v", i, d.IO, d.DedicatedIOThread, w.io, w.dedicated)
		}
	}
	if io := cfg.DiskIO; io != (DiskIO{BlockMultiQueue: true, ThreadsPolicy: kubevirtv1.IOThreadsPolicySupplementalPool, PoolThreads: 4}) {
		t.Errorf("disk I/O %+v", io)
	}
	if !cfg.EFI || !cfg.EFIPersistent {
		t.Errorf("EFI %v, persistent %v", cfg.EFI, cfg.EFIPersistent)
	}
	for _, count := range []string{"", "0", " 0 "} {
		for _, policy := range []string{"", "shared", "auto"} {
			cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagIOThreadsPolicy, policy, FlagIOThreadCount, count))
			if problems != "" || cfg.DiskIO != (DiskIO{ThreadsPolicy: kubevirtv1.IOThreadsPolicy(policy)}) {
				t.Errorf("policy %q, count %q: %+v %s", policy, count, cfg.DiskIO, problems)
			}
		}
	}
	if cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagIOThreadsPolicy, "supplementalPool", FlagIOThreadCount, "4294967295")); problems != "" || cfg.DiskIO.PoolThreads != 4294967295 {
		t.Errorf("the largest count KubeVirt's field holds: %+v %s", cfg.DiskIO, problems)
	}
}

// The reference's cases (storageperformance_test.go at 6092ec41, Test_checkDiskPerformance and
// Test_checkIOThreads) are accepted and refused alike, and what KubeVirt's admitter refuses besides (a dedicated
// I/O thread off virtio, a supplemental pool without its count) is refused too, each under its flag.
func TestParseDiskIORejects(t *testing.T) {
	disk := func(fields string) Options {
		return configtest.With(configtest.MinimalOptions(), FlagDiskInfo, `{"disks":[{"imageName":"img","size":10`+fields+`}]}`)
	}
	cdrom := func(fields string) Options {
		return configtest.With(configtest.MinimalOptions(), FlagDiskInfo,
			`{"disks":[{"imageName":"img","size":10},{"imageName":"iso","size":1,"type":"cd-rom"`+fields+`}]}`)
	}
	threads := func(policy, count string) Options {
		return configtest.With(configtest.MinimalOptions(), FlagIOThreadsPolicy, policy, FlagIOThreadCount, count)
	}
	for _, ok := range []Options{disk(""), disk(`,"cache":"none","io":"native","dedicatedIOThread":true`),
		disk(`,"cache":"writeback","io":"threads"`), cdrom(""), threads("", "0"), threads("shared", ""),
		threads("auto", ""), threads("supplementalPool", "4")} {
		if _, problems := parseProblems(t, ok); problems != "" {
			t.Errorf("refused: %s", problems)
		}
	}
	tests := []struct {
		name       string
		opts       Options
		flag, want string
	}{
		{"io on a cd-rom", cdrom(`,"io":"threads"`), FlagDiskInfo, "disks[1] is a cd-rom: io and dedicatedIOThread are for disks of type disk"},
		{"dedicated thread on a cd-rom", cdrom(`,"dedicatedIOThread":true`), FlagDiskInfo, "disks[1] is a cd-rom: io and dedicatedIOThread are for disks of type disk"},
		{"unknown io", disk(`,"io":"io_uring"`), FlagDiskInfo, `disks[0].io must be one of native or threads (KubeVirt's disk I/O modes), or empty for KubeVirt's choice, got "io_uring"`},
		{"native with writeback", disk(`,"cache":"writeback","io":"native"`), FlagDiskInfo,
			`disks[0].io native needs cache none (native I/O bypasses the host's page cache, which writethrough and writeback use), got cache "writeback"`},
		{"native without cache", disk(`,"io":"native"`), FlagDiskInfo, `disks[0].io native needs cache none (native I/O bypasses the host's page cache, which writethrough and writeback use), got cache ""`},
		{"dedicated thread on scsi", disk(`,"bus":"scsi","dedicatedIOThread":true`), FlagDiskInfo,
			`disks[0].dedicatedIOThread needs bus virtio: KubeVirt gives I/O threads to virtio disks only, got bus "scsi"`},
		{"io not a string", disk(`,"io":1`), FlagDiskInfo, "disks[0]: io must be"},
		{"unknown policy", threads("dedicated", ""), FlagIOThreadsPolicy, `must be one of shared, auto or supplementalPool (KubeVirt's I/O threads policies), or empty for none, got "dedicated"`},
		{"policy in the wrong case", threads("SupplementalPool", "4"), FlagIOThreadsPolicy, `must be one of shared, auto or supplementalPool`},
		{"negative count", threads("supplementalPool", "-1"), FlagIOThreadCount, `must be a whole number of threads from 0 to 4294967295 (0 or empty: none), got "-1"`},
		{"count beyond KubeVirt's field", threads("supplementalPool", "4294967296"), FlagIOThreadCount, "must be a whole number of threads from 0 to 4294967295"},
		{"count not a number", threads("supplementalPool", "four"), FlagIOThreadCount, `got "four"`},
		{"count with auto", threads("auto", "2"), FlagIOThreadCount,
			"needs --harvester-io-threads-policy supplementalPool: it is the size of that policy's pool of I/O threads, which the other policies do not have"},
		{"count without a policy", threads("", "2"), FlagIOThreadCount, "needs --harvester-io-threads-policy supplementalPool"},
		{"supplemental pool without a count", threads("supplementalPool", "0"), FlagIOThreadsPolicy,
			"supplementalPool needs --harvester-io-thread-count: KubeVirt refuses a supplemental pool without its number of threads (1 or more)"},
		{"persistent EFI without EFI", configtest.With(configtest.MinimalOptions(), FlagPersistentEFI, true), FlagPersistentEFI,
			"needs --harvester-enable-efi: it keeps the variables of the VM's EFI firmware, and the VM boots with BIOS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("m1", tt.opts)
			var cerr *ConfigError
			if !errors.As(err, &cerr) {
				t.Fatalf("want a *ConfigError, got %v", err)
			}
			if len(cerr.Problems) != 1 || cerr.Problems[0].Flag != tt.flag || !strings.Contains(cerr.Problems[0].Message, tt.want) {
				t.Fatalf("want one problem on %s containing %q; got:\n%v", tt.flag, tt.want, err)
			}
		})
	}
}

// Every problem of the disk performance options is told at once, each disk's under its position.
func TestParseDiskIOTellsEveryProblem(t *testing.T) {
	_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(),
		FlagDiskInfo, `{"disks":[{"imageName":"img","size":10,"io":"native"},{"storageClassName":"sc","size":1,"bus":"sata","dedicatedIOThread":true}]}`,
		FlagIOThreadsPolicy, "supplementalPool", FlagPersistentEFI, true))
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a *ConfigError, got %v", err)
	}
	want := []struct{ flag, start string }{{FlagPersistentEFI, "needs --harvester-enable-efi"}, {FlagDiskInfo, "disks[0].io native"},
		{FlagDiskInfo, "disks[1].dedicatedIOThread"}, {FlagIOThreadsPolicy, "supplementalPool needs"}}
	if len(cerr.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(cerr.Problems), len(want), err)
	}
	for i, w := range want {
		if p := cerr.Problems[i]; p.Flag != w.flag || !strings.HasPrefix(p.Message, w.start) {
			t.Errorf("problem %d: %s: %s; want %s: %s…", i, p.Flag, p.Message, w.flag, w.start)
		}
	}
}
