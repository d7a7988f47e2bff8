package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// capacityCluster is a fake Harvester whose node1 has one GPU with passthrough enabled and one vGPU profile.
func capacityCluster(t *testing.T) *fakeCluster {
	fc := newFakeCluster(t)
	fc.addPCIDevice("0000:17:00.0", kubefake.GPUResource, true)
	n := kubefake.HostNode("node1", map[string]int64{kubefake.GPUResource: 1, kubefake.VGPUResource: 1})
	fc.OK(kube.Create(context.Background(), fc.C, kube.Nodes, "", &n))
	return fc
}

func (fc *fakeCluster) addVMI(vmi kubevirtv1.VirtualMachineInstance) {
	fc.OK(fc.KV.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Create(context.Background(), &vmi, metav1.CreateOptions{}))
}

func TestPreCreateCheckDeviceCapacity(t *testing.T) {
	fc := capacityCluster(t)
	kubefake.CaptureLog(t)
	if err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck(); err != nil {
		t.Fatalf("a free device refused: %v", err)
	}
	fc.addVMI(kubefake.DeviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{kubefake.GPUResource}))
	err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck()
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) || len(cerr.Problems) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	configtest.WantAll(t, err.Error(),
		"--harvester-host-device-info: nvidia.com/GA102GL_A10: 1 requested, none free (node1: 1 allocatable, 1 in use by default/vm-a); "+
			"stop a VM that holds one or enable passthrough on another device")
	if vms, _, secrets := fc.objects(); vms != 0 || secrets != 0 {
		t.Errorf("pre-flight created %d VMs, %d Secrets", vms, secrets)
	}

	// vGPUs are counted the same way, and refused naming their own flag.
	opts := configtest.With(createOptions(), config.FlagVGPUInfo, `{"vGPURequests":[{"name":"a","deviceName":"`+kubefake.VGPUResource+`"},{"name":"b","deviceName":"`+kubefake.VGPUResource+`"}]}`)
	err = newTestDriver(t, fc, "m1", opts).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-vgpu-info: nvidia.com/NVIDIA_A2-2Q: 2 requested, only 1 free (node1: 1 allocatable, none in use)")

	// A cordoned host gives nothing.
	n := kubefake.HostNode("node2", map[string]int64{kubefake.GPUResource: 1})
	n.Spec.Unschedulable = true
	fc.OK(kube.Create(context.Background(), fc.C, kube.Nodes, "", &n))
	err = newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck()
	configtest.WantAll(t, errString(err), "none free (node1: 1 allocatable, 1 in use by default/vm-a)")
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A credential that may not list hosts or VMIs in all namespaces is not blocked.
func TestPreCreateCheckDeviceCapacityForbidden(t *testing.T) {
	for _, res := range []string{"nodes", "virtualmachineinstances"} {
		t.Run(res, func(t *testing.T) {
			fc := capacityCluster(t)
			logs := kubefake.CaptureLog(t)
			fc.addVMI(kubefake.DeviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{kubefake.GPUResource}))
			fc.FailOn("list", res, apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", errors.New("no")))
			if err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "(not allowed): free devices not counted") {
				t.Errorf("no debug line:\n%s", logs)
			}
		})
	}
}
