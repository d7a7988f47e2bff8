package harvester

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// The disk performance options and the kept EFI state pass the pre-flight and reach the VM a create makes.
func TestCreateCarriesDiskIOAndEFIState(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(),
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/ubuntu","size":10,"bootOrder":1,"cache":"none","io":"native","dedicatedIOThread":true}]}`,
		config.FlagEnableEFI, true, config.FlagPersistentEFI, true, config.FlagBlockMultiQueue, true,
		config.FlagIOThreadsPolicy, "supplementalPool", config.FlagIOThreadCount, "3"))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dom := vm.Spec.Template.Spec.Domain
	if disk := dom.Devices.Disks[0]; disk.IO != kubevirtv1.IONative || disk.Cache != kubevirtv1.CacheNone || disk.DedicatedIOThread == nil || !*disk.DedicatedIOThread {
		t.Errorf("disk-0: %+v", disk)
	}
	if dom.Devices.BlockMultiQueue == nil || !*dom.Devices.BlockMultiQueue || dom.IOThreadsPolicy == nil || *dom.IOThreadsPolicy != kubevirtv1.IOThreadsPolicySupplementalPool ||
		dom.IOThreads == nil || dom.IOThreads.SupplementalPoolThreadCount == nil || *dom.IOThreads.SupplementalPoolThreadCount != 3 {
		t.Errorf("block multi-queue %v, I/O threads policy %v, threads %+v", dom.Devices.BlockMultiQueue, dom.IOThreadsPolicy, dom.IOThreads)
	}
	if f := dom.Firmware; f == nil || f.Bootloader.EFI == nil || f.Bootloader.EFI.Persistent == nil || !*f.Bootloader.EFI.Persistent {
		t.Errorf("firmware %+v", f)
	}
}
