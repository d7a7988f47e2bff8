package harvester

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// memoryPatch is a --harvester-vm-patch that sets the VM's memory limit to q.
func memoryPatch(q string) string {
	return `{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":"` + q + `"}}}}}}}`
}

// The pre-flight judges the VM the create sends, --harvester-vm-patch applied, not the flags (issue 45): under a
// limits.memory quota of 8Gi, --harvester-memory-size 16 with a patch setting the memory to 2Gi fits, and the
// create sends that VM; a patch raising the memory past the quota is refused before anything is made, under
// --harvester-vm-patch, which set it.
func TestPreCreateCheckJudgesThePatchedVM(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	fc.addQuota("memory", false, "limits.memory", "8Gi", "0")

	err := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagMemorySize, 16)).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-memory-size: resource quota memory in namespace default: limits.memory has 8Gi free (0 of 8Gi used), "+
		"the machine needs 16Gi (its memory, before KubeVirt's overhead)")

	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagMemorySize, 16, config.FlagVMPatch, memoryPatch("2Gi")))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatalf("16 GiB patched to 2Gi under an 8Gi quota: %v", err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := vm.Spec.Template.Spec.Domain.Resources.Limits.Memory().String(); got != "2Gi" {
		t.Errorf("the create sent a VM of %s memory, not the VM the pre-flight judged (2Gi)", got)
	}

	err = newTestDriver(t, fc, "m2", configtest.With(createOptions(), config.FlagMemorySize, 4, config.FlagVMPatch, memoryPatch("32Gi"))).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-vm-patch: resource quota memory in namespace default: limits.memory has 8Gi free (0 of 8Gi used), "+
		"the machine needs 32Gi (its memory, set by the VM patch, before KubeVirt's overhead)")
	if strings.Contains(errString(err), "--harvester-memory-size") {
		t.Errorf("the flag's 4 GiB is blamed, not the patch's memory: %v", err)
	}
}

// A network or a device a patch gives the VM is checked as the flags' are, under --harvester-vm-patch: the
// network must exist, the device must be free on a host.
func TestPreCreateCheckJudgesWhatAPatchAdds(t *testing.T) {
	fc := capacityCluster(t)
	kubefake.CaptureLog(t)
	network := `[{"op":"add","path":"/spec/template/spec/domain/devices/interfaces/-","value":{"name":"extra","bridge":{}}},` +
		`{"op":"add","path":"/spec/template/spec/networks/-","value":{"name":"extra","multus":{"networkName":"default/vlan9"}}}]`
	c := checkNamed(t, newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagVMPatch, network)), preflight.CheckNetworks)
	if len(c.Problems) != 1 || c.Problems[0].String() != "--harvester-vm-patch: extra: network default/vlan9 does not exist in Harvester (Networks → VM Networks)" {
		t.Errorf("a network the patch adds: %+v", c)
	}

	// Two GPUs: the host has one.
	devices := `{"spec":{"template":{"spec":{"domain":{"devices":{"hostDevices":[{"name":"a","deviceName":"` + kubefake.GPUResource + `"},` +
		`{"name":"b","deviceName":"` + kubefake.GPUResource + `"}]}}}}}}`
	c = checkNamed(t, newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagVMPatch, devices)), preflight.CheckHostDevices)
	if len(c.Problems) != 1 || !strings.HasPrefix(c.Problems[0].String(), "--harvester-vm-patch: "+kubefake.GPUResource+": 2 requested, only 1 free") {
		t.Errorf("devices the patch adds: %+v", c)
	}
	if c.Read != "of VM default/m1" {
		t.Errorf("the host devices' line reads %q, want the VM's", c.Read)
	}
}
