package kubefake

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// Resource names of the devices the tests pass through: a GPU (PCI), a vGPU profile, a USB device.
const (
	GPUResource  = "nvidia.com/GA102GL_A10"
	VGPUResource = "nvidia.com/NVIDIA_A2-2Q"
	USBResource  = "kubevirt.io/node1-0951-1666-001002"
)

// HostNode is a Harvester host with allocatable device counts (resource name: count), as the device plugins of
// the pcidevices add-on publish them in node.status.allocatable.
func HostNode(name string, devices map[string]int64) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}
	for res, count := range devices {
		n.Status.Allocatable[corev1.ResourceName(res)] = *resource.NewQuantity(count, resource.DecimalSI)
	}
	return n
}

// DeviceVMI is a VMI on node ("" for none yet), in phase, with host devices and GPUs of the resource names.
func DeviceVMI(ns, name, node string, phase kubevirtv1.VirtualMachineInstancePhase, hostDevices []string, gpus ...string) kubevirtv1.VirtualMachineInstance {
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

// LBPool is a load-balancer IP pool of Harvester's load balancer whose selector names network ("" for none) and a
// scope tuple for each of namespaces (any project and guest cluster), with ranges.
func LBPool(name, network string, namespaces []string, ranges ...kube.IPPoolRange) kube.IPPool {
	p := kube.IPPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Spec.Ranges, p.Spec.Selector.Network = ranges, network
	for _, ns := range namespaces {
		p.Spec.Selector.Scope = append(p.Spec.Selector.Scope, kube.IPPoolScope{Project: "*", Namespace: ns, GuestCluster: "*"})
	}
	return p
}
