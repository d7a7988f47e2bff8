package main

import (
	"strings"
	"testing"
)

// render shows the disk performance options and the kept EFI state in the VM it prints, and check refuses their
// wrong values before it asks Harvester anything, each problem under its flag, all at once.
func TestVerbsShowTheDiskIOOptions(t *testing.T) {
	args := []string{"--machine-name", "m1", "--harvester-network-name", "net",
		"--harvester-disk-info", `{"disks":[{"imageName":"img","size":10,"bootOrder":1,"cache":"none","io":"native","dedicatedIOThread":true}]}`,
		"--harvester-enable-efi", "--harvester-persistent-efi", "--harvester-block-multi-queue",
		"--harvester-io-threads-policy", "supplementalPool", "--harvester-io-thread-count", "4"}
	stdout, stderr, code := runVerb(t, noEnv, "render", args...)
	if code != 0 {
		t.Fatalf("render: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"blockMultiQueue: true", "dedicatedIOThread: true", "io: native", "persistent: true",
		"ioThreadsPolicy: supplementalPool", "supplementalPoolThreadCount: 4"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("render prints no %q", want)
		}
	}

	_, stderr, code = runVerb(t, unreachableHarvester, "check", "--machine-name", "m1", "--harvester-network-name", "net",
		"--harvester-disk-info", `{"disks":[{"imageName":"img","size":10,"bus":"scsi","io":"native","dedicatedIOThread":true}]}`,
		"--harvester-persistent-efi", "--harvester-io-thread-count", "4")
	want := []string{
		"--harvester-persistent-efi: needs --harvester-enable-efi: it keeps the variables of the VM's EFI firmware, and the VM boots with BIOS",
		`--harvester-disk-info: disks[0].io native needs cache none (native I/O bypasses the host's page cache, which writethrough and writeback use), got cache ""`,
		`--harvester-disk-info: disks[0].dedicatedIOThread needs bus virtio: KubeVirt gives I/O threads to virtio disks only, got bus "scsi"`,
		"--harvester-io-thread-count: needs --harvester-io-threads-policy supplementalPool: it is the size of that policy's pool of I/O threads, which the other policies do not have",
	}
	if code != 1 {
		t.Errorf("check: exit %d, want 1", code)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("check does not say %q:\n%s", w, stderr)
		}
	}
}
