package harvester

import (
	"context"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// poolDriver is a test driver that checks machines machines at once, as PreflightPool makes it.
func poolDriver(t *testing.T, fc *fakeCluster, opts config.Options, machines int) *Driver {
	d := newTestDriver(t, fc, "m1", opts)
	d.machines = machines
	return d
}

// Three machines (2 cores, 4 GiB, a 40 GiB disk each) need three times what one needs of every quota; one fits.
func TestPreflightPoolQuota(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addQuota("pool", false, "limits.cpu", "5", "0", "requests.storage", "100Gi", "0", "count/virtualmachines.kubevirt.io", "3", "0")
	if err := poolDriver(t, fc, createOptions(), 1).PreCreateCheck(); err != nil {
		t.Fatalf("one machine refused: %v", err)
	}
	if err := poolDriver(t, fc, createOptions(), 2).PreCreateCheck(); err != nil {
		t.Fatalf("two machines refused: %v", err)
	}
	err := poolDriver(t, fc, createOptions(), 3).PreCreateCheck()
	configtest.WantAll(t, errString(err),
		"--harvester-cpu-count: resource quota pool in namespace default: limits.cpu has 5 free (0 of 5 used), 3 machines need 6 (3 times its cores)",
		"--harvester-disk-size: resource quota pool in namespace default: requests.storage has 100Gi free (0 of 100Gi used), 3 machines need 120Gi (3 times the sum of its disks' sizes)")
	if strings.Contains(errString(err), "virtualmachines") {
		t.Errorf("three VMs fit a quota of three, yet: %v", err)
	}
}

// Two machines that each pass a host's only GPU through need two: the check refuses them, one passes.
func TestPreflightPoolDevices(t *testing.T) {
	fc := capacityCluster(t)
	kubefake.CaptureLog(t)
	if err := poolDriver(t, fc, hostDeviceOptions(kubefake.GPUResource), 1).PreCreateCheck(); err != nil {
		t.Fatalf("one machine refused: %v", err)
	}
	err := poolDriver(t, fc, hostDeviceOptions(kubefake.GPUResource), 2).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-host-device-info: nvidia.com/GA102GL_A10: 2 requested, only 1 free (node1: 1 allocatable, none in use)")
	opts := configtest.With(createOptions(), config.FlagVGPUInfo, `{"vGPURequests":[{"name":"a","deviceName":"`+kubefake.VGPUResource+`"}]}`)
	err = poolDriver(t, fc, opts, 3).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-vgpu-info: nvidia.com/NVIDIA_A2-2Q: 3 requested, only 1 free")
}

// A range of two addresses holds two machines, not three; with none free the range is exhausted, as for one.
func TestPreflightPoolAddresses(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	kubefake.CaptureLog(t)
	const pool = "10.0.0.10-10.0.0.11/24"
	if err := poolDriver(t, fc, poolCreateOptions(pool), 2).PreCreateCheck(); err != nil {
		t.Fatalf("two machines in two addresses: %v", err)
	}
	err := poolDriver(t, fc, poolCreateOptions(pool), 3).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-ip-pool: the range 10.0.0.10-10.0.0.11/24 on network default/vlan1 has 2 of its 2 addresses free, 3 machines need one each")
	if err := newTestDriver(t, fc, "m0", poolCreateOptions(pool)).Create(); err != nil {
		t.Fatal(err)
	}
	err = poolDriver(t, fc, poolCreateOptions(pool), 2).PreCreateCheck()
	configtest.WantAll(t, errString(err), "has 1 of its 2 addresses free, 2 machines need one each")
}

func TestPreflightPoolBounds(t *testing.T) {
	for _, n := range []int{0, -1, preflight.MaxPoolSize + 1} {
		if _, err := PreflightPool(context.Background(), "m1", createOptions(), n); err == nil ||
			!strings.Contains(err.Error(), "must be 1 to 1000") {
			t.Errorf("PreflightPool with %d machines: %v", n, err)
		}
	}
}
