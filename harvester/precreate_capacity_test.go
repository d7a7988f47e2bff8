package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

const vgpuResource = "nvidia.com/NVIDIA_A2-2Q"

// hostNode is a Harvester host with allocatable device counts ("resource=count").
func hostNode(name string, devices map[string]int64) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}
	for res, count := range devices {
		n.Status.Allocatable[corev1.ResourceName(res)] = *resource.NewQuantity(count, resource.DecimalSI)
	}
	return n
}

// deviceVMI is a VMI on node (""), in phase, with host devices and vGPUs of the resource names.
func deviceVMI(ns, name, node string, phase kubevirtv1.VirtualMachineInstancePhase, hostDevices []string, gpus ...string) kubevirtv1.VirtualMachineInstance {
	vmi := kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	vmi.Status.NodeName, vmi.Status.Phase = node, phase
	for i, res := range hostDevices {
		vmi.Spec.Domain.Devices.HostDevices = append(vmi.Spec.Domain.Devices.HostDevices, kubevirtv1.HostDevice{Name: "hd" + string(rune('a'+i)), DeviceName: res})
	}
	for i, res := range gpus {
		vmi.Spec.Domain.Devices.GPUs = append(vmi.Spec.Domain.Devices.GPUs, kubevirtv1.GPU{Name: "gpu" + string(rune('a'+i)), DeviceName: res})
	}
	return vmi
}

func TestDeviceUseShortage(t *testing.T) {
	nodes := []corev1.Node{hostNode("node2", nil), hostNode("node1", map[string]int64{gpuResource: 1, vgpuResource: 4})}
	vmis := []kubevirtv1.VirtualMachineInstance{
		deviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{gpuResource}, vgpuResource),
		deviceVMI("team", "vm-b", "node1", kubevirtv1.Running, nil, vgpuResource, vgpuResource),
		deviceVMI("team", "vm-c", "", kubevirtv1.Pending, nil, vgpuResource),
		deviceVMI("default", "vm-old", "node1", kubevirtv1.Succeeded, []string{gpuResource}), // holds nothing
	}
	u := deviceUse(nodes, vmis)
	for _, tc := range []struct {
		res  string
		n    int
		want string
	}{
		{gpuResource, 1, "nvidia.com/GA102GL_A10: 1 requested, none free (node1: 1 allocatable, 1 in use by default/vm-a; node2: 0)"},
		// 4 allocatable, 3 held, 1 wanted by a VMI not placed yet.
		{vgpuResource, 1, "nvidia.com/NVIDIA_A2-2Q: 1 requested, none free (node1: 4 allocatable, 3 in use by default/vm-a and team/vm-b (2); node2: 0; " +
			"1 wanted by team/vm-c, not yet placed)"},
		{usbResource, 1, "kubevirt.io/node1-0951-1666-001002: 1 requested, none free (node1: 0; node2: 0)"},
	} {
		if got := u.shortage(tc.res, tc.n); got != tc.want {
			t.Errorf("shortage(%s, %d):\n got %q\nwant %q", tc.res, tc.n, got, tc.want)
		}
	}

	u = deviceUse([]corev1.Node{hostNode("node1", map[string]int64{gpuResource: 2}), hostNode("node2", map[string]int64{gpuResource: 1})},
		[]kubevirtv1.VirtualMachineInstance{deviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{gpuResource})})
	if got := u.free(gpuResource); got != 2 {
		t.Errorf("free %d, want 2", got)
	}
	if got := u.shortage(gpuResource, 2); got != "" {
		t.Errorf("two of two free refused: %s", got)
	}
	if got, want := u.shortage(gpuResource, 3), "nvidia.com/GA102GL_A10: 3 requested, only 2 free (node1: 2 allocatable, 1 in use by default/vm-a; node2: 1 allocatable, none in use)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// capacityCluster is a fake Harvester whose node1 has one GPU with passthrough enabled and one vGPU profile.
func capacityCluster(t *testing.T) *fakeCluster {
	fc := newFakeCluster(t)
	fc.addPCIDevice("0000:17:00.0", gpuResource, true)
	n := hostNode("node1", map[string]int64{gpuResource: 1, vgpuResource: 1})
	fc.OK(kube.Create(context.Background(), fc.C, kube.Nodes, "", &n))
	return fc
}

func (fc *fakeCluster) addVMI(vmi kubevirtv1.VirtualMachineInstance) {
	fc.OK(fc.KV.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Create(context.Background(), &vmi, metav1.CreateOptions{}))
}

func TestPreCreateCheckDeviceCapacity(t *testing.T) {
	fc := capacityCluster(t)
	kubefake.CaptureLog(t)
	if err := newTestDriver(t, fc, "m1", hostDeviceOptions(gpuResource)).PreCreateCheck(); err != nil {
		t.Fatalf("a free device refused: %v", err)
	}
	fc.addVMI(deviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{gpuResource}))
	err := newTestDriver(t, fc, "m1", hostDeviceOptions(gpuResource)).PreCreateCheck()
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
	opts := configtest.With(createOptions(), config.FlagVGPUInfo, `{"vGPURequests":[{"name":"a","deviceName":"`+vgpuResource+`"},{"name":"b","deviceName":"`+vgpuResource+`"}]}`)
	err = newTestDriver(t, fc, "m1", opts).PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-vgpu-info: nvidia.com/NVIDIA_A2-2Q: 2 requested, only 1 free (node1: 1 allocatable, none in use)")

	// A cordoned host gives nothing.
	n := hostNode("node2", map[string]int64{gpuResource: 1})
	n.Spec.Unschedulable = true
	fc.OK(kube.Create(context.Background(), fc.C, kube.Nodes, "", &n))
	err = newTestDriver(t, fc, "m1", hostDeviceOptions(gpuResource)).PreCreateCheck()
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
			fc.addVMI(deviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{gpuResource}))
			fc.FailOn("list", res, apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", errors.New("no")))
			if err := newTestDriver(t, fc, "m1", hostDeviceOptions(gpuResource)).PreCreateCheck(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "(not allowed): free devices not counted") {
				t.Errorf("no debug line:\n%s", logs)
			}
		})
	}
}
