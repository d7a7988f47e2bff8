// Package vmspec builds VirtualMachines shaped like the node driver's (see harvester/objects/vm.go), for the test bed's own
// tests. The plugin has its own builder; this one is deliberately separate and minimal.
package vmspec

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Disk is one image-backed disk: a PVC from the volumeClaimTemplates annotation.
type Disk struct {
	Image        string // "<namespace>/<name>" of the VirtualMachineImage
	StorageClass string // the image's status.storageClassName
}

// VM returns a VM called name in namespace with runStrategy RerunOnFailure, the node driver's creator label,
// one NIC on network (a "ns/name" NAD) and one PVC per disk, named <vm>-disk-<i>.
func VM(namespace, name, network string, disks ...Disk) *kubevirtv1.VirtualMachine {
	labels := map[string]string{"harvesterhci.io/creator": "docker-machine-driver-harvester", "harvesterhci.io/vmName": name}
	var claims []corev1.PersistentVolumeClaim
	var devs []kubevirtv1.Disk
	var vols []kubevirtv1.Volume
	for i, d := range disks {
		disk := fmt.Sprintf("disk-%d", i)
		claim := ClaimName(name, i)
		claims = append(claims, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim, Annotations: map[string]string{"harvesterhci.io/imageId": d.Image}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
				StorageClassName: ptr.To(d.StorageClass),
				VolumeMode:       ptr.To(corev1.PersistentVolumeBlock),
			},
		})
		devs = append(devs, kubevirtv1.Disk{Name: disk, BootOrder: ptr.To(uint(i + 1)),
			DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
		vols = append(vols, kubevirtv1.Volume{Name: disk, VolumeSource: kubevirtv1.VolumeSource{
			PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
				PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}})
	}
	vct, _ := json.Marshal(claims)
	rs := kubevirtv1.RunStrategyRerunOnFailure
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels,
			Annotations: map[string]string{"harvesterhci.io/volumeClaimTemplates": string(vct)}},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &rs,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					Domain: kubevirtv1.DomainSpec{
						CPU: &kubevirtv1.CPU{Cores: 1},
						Resources: kubevirtv1.ResourceRequirements{Limits: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
						Devices: kubevirtv1.Devices{
							Disks:      devs,
							Interfaces: []kubevirtv1.Interface{{Name: "nic-0", Model: "virtio", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}},
						},
					},
					Networks: []kubevirtv1.Network{{Name: "nic-0", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: network}}}},
					Volumes:  vols,
				},
			},
		},
	}
}

// ClaimName is the PVC name VM gives disk i.
func ClaimName(vm string, i int) string { return fmt.Sprintf("%s-disk-%d", vm, i) }

// OwnedSecret returns a cloud-init Secret owned by vm, as the driver makes one (harvester/objects/secret.go).
func OwnedSecret(vm *kubevirtv1.VirtualMachine) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: vm.Name + "-cloudinit", Namespace: vm.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, kubevirtv1.VirtualMachineGroupVersionKind)}},
		StringData: map[string]string{"userdata": "#cloud-config\n", "networkdata": ""},
	}
}
