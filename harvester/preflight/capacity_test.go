package preflight

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

func TestDeviceUseShortage(t *testing.T) {
	nodes := []corev1.Node{kubefake.HostNode("node2", nil), kubefake.HostNode("node1", map[string]int64{kubefake.GPUResource: 1, kubefake.VGPUResource: 4})}
	vmis := []kubevirtv1.VirtualMachineInstance{
		kubefake.DeviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{kubefake.GPUResource}, kubefake.VGPUResource),
		kubefake.DeviceVMI("team", "vm-b", "node1", kubevirtv1.Running, nil, kubefake.VGPUResource, kubefake.VGPUResource),
		kubefake.DeviceVMI("team", "vm-c", "", kubevirtv1.Pending, nil, kubefake.VGPUResource),
		kubefake.DeviceVMI("default", "vm-old", "node1", kubevirtv1.Succeeded, []string{kubefake.GPUResource}), // holds nothing
	}
	u := deviceUse(nodes, vmis)
	for _, tc := range []struct {
		res  string
		n    int
		want string
	}{
		{kubefake.GPUResource, 1, "nvidia.com/GA102GL_A10: 1 requested, none free (node1: 1 allocatable, 1 in use by default/vm-a; node2: 0)"},
		// 4 allocatable, 3 held, 1 wanted by a VMI not placed yet.
		{kubefake.VGPUResource, 1, "nvidia.com/NVIDIA_A2-2Q: 1 requested, none free (node1: 4 allocatable, 3 in use by default/vm-a and team/vm-b (2); node2: 0; " +
			"1 wanted by team/vm-c, not yet placed)"},
		{kubefake.USBResource, 1, "kubevirt.io/node1-0951-1666-001002: 1 requested, none free (node1: 0; node2: 0)"},
	} {
		if got := u.shortage(tc.res, tc.n); got != tc.want {
			t.Errorf("shortage(%s, %d):\n got %q\nwant %q", tc.res, tc.n, got, tc.want)
		}
	}

	u = deviceUse([]corev1.Node{kubefake.HostNode("node1", map[string]int64{kubefake.GPUResource: 2}), kubefake.HostNode("node2", map[string]int64{kubefake.GPUResource: 1})},
		[]kubevirtv1.VirtualMachineInstance{kubefake.DeviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{kubefake.GPUResource})})
	if got := u.free(kubefake.GPUResource); got != 2 {
		t.Errorf("free %d, want 2", got)
	}
	if got := u.shortage(kubefake.GPUResource, 2); got != "" {
		t.Errorf("two of two free refused: %s", got)
	}
	if got, want := u.shortage(kubefake.GPUResource, 3), "nvidia.com/GA102GL_A10: 3 requested, only 2 free (node1: 2 allocatable, 1 in use by default/vm-a; node2: 1 allocatable, none in use)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
