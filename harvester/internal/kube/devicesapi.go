package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The few fields of the pcidevices-controller add-on's resources the driver reads, mirrored from
// github.com/harvester/pcidevices pkg/apis/devices.harvesterhci.io/v1beta1 (pcidevice.go, pcideviceclaim.go,
// usb_device.go). That module is not linked, nor required by Harvester's own go.mod: the add-on ships
// separately, and its resources exist only while the add-on is enabled. All are cluster-scoped
// (pkg/crd/crd.go: NonNamespace).

// DevicesGroupVersion is the API group and version of the pcidevices-controller's resources.
var DevicesGroupVersion = schema.GroupVersion{Group: "devices.harvesterhci.io", Version: "v1beta1"}

// The add-on's resources the pre-flight check lists.
var (
	PCIDevices      = kind[PCIDevice](DevicesGroupVersion, "PCIDevice", "pcidevices")
	PCIDeviceClaims = kind[PCIDeviceClaim](DevicesGroupVersion, "PCIDeviceClaim", "pcideviceclaims")
	USBDevices      = kind[USBDevice](DevicesGroupVersion, "USBDevice", "usbdevices")
)

// PCIDevice mirrors devices.harvesterhci.io/v1beta1 PCIDevice: one PCI device of one host, found by the add-on.
// Status.ResourceName is what a VM's hostDevices[].deviceName asks for.
type PCIDevice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Address      string `json:"address"`
		NodeName     string `json:"nodeName"`
		ResourceName string `json:"resourceName"`
		Description  string `json:"description"`
		// ClassID is the device's PCI class and subclass, "0302" for a 3D controller (PCIDeviceStatus.Update).
		ClassID string `json:"classId"`
	} `json:"status,omitempty"`
}

// PCIDeviceClaim mirrors devices.harvesterhci.io/v1beta1 PCIDeviceClaim: "Enable Passthrough" on a PCI device
// creates one for the device at Spec.NodeName/Spec.Address; the add-on binds the device to vfio-pci, permits it in
// KubeVirt and then sets Status.PassthroughEnabled.
type PCIDeviceClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Address  string `json:"address"`
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		PassthroughEnabled bool `json:"passthroughEnabled"`
	} `json:"status,omitempty"`
}

// USBDevice mirrors devices.harvesterhci.io/v1beta1 USBDevice; the add-on sets Status.Enabled once the device's
// claim (a USBDeviceClaim of the same name) has its device plugin running (pkg/controller/usbdevice).
type USBDevice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		NodeName     string `json:"nodeName"`
		ResourceName string `json:"resourceName"`
		Description  string `json:"description"`
		Enabled      bool   `json:"enabled"`
	} `json:"status,omitempty"`
}
