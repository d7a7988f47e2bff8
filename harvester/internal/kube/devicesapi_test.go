package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The pcidevices module is not linked, so unlike TestHarvesterMirrorsMatch this reads objects spelled as the
// add-on writes them (github.com/harvester/pcidevices sample/pcidevice.yaml, sample/pcideviceclaim.yaml, and the
// JSON tags of pkg/apis/devices.harvesterhci.io/v1beta1 usb_device.go: note vendorID there, vendorId on PCI).
func TestDeviceMirrorsReadTheAddOnsFields(t *testing.T) {
	pci := readAs[PCIDevice](t, `apiVersion: devices.harvesterhci.io/v1beta1
kind: PCIDevice
metadata: {name: titan-001f6}
status: {address: "00:1f.6", vendorId: "8086", deviceId: "0d4c", classId: "0200", nodeName: titan,
  resourceName: intel.com/ETHERNET_CONNECTION_11_I219LM, description: "Ethernet controller: Intel", kernelDriverInUse: vfio-pci}
`)
	if s := pci.Status; s.Address != "00:1f.6" || s.NodeName != "titan" || s.ResourceName != "intel.com/ETHERNET_CONNECTION_11_I219LM" || s.Description == "" || s.ClassID != "0200" {
		t.Errorf("PCIDevice mirror: %+v", s)
	}
	claim := readAs[PCIDeviceClaim](t, `apiVersion: devices.harvesterhci.io/v1beta1
kind: PCIDeviceClaim
metadata: {name: titan-001f6}
spec: {address: "00:1f.6", nodeName: titan, userName: yuri}
status: {kernelDriverToUnbind: e1000e, passthroughEnabled: true}
`)
	if claim.Spec.Address != "00:1f.6" || claim.Spec.NodeName != "titan" || !claim.Status.PassthroughEnabled {
		t.Errorf("PCIDeviceClaim mirror: %+v", claim)
	}
	usb := readAs[USBDevice](t, `apiVersion: devices.harvesterhci.io/v1beta1
kind: USBDevice
metadata: {name: titan-0951-1666-001002}
status: {vendorID: "0951", productID: "1666", nodeName: titan, resourceName: kubevirt.io/titan-0951-1666-001002,
  devicePath: /dev/bus/usb/001/002, description: DataTraveler, pciAddress: "0000:00:14.0", enabled: true}
`)
	if s := usb.Status; s.NodeName != "titan" || s.ResourceName != "kubevirt.io/titan-0951-1666-001002" || !s.Enabled || s.Description != "DataTraveler" {
		t.Errorf("USBDevice mirror: %+v", s)
	}
}

// readAs reads a YAML object into T the way List and Get do.
func readAs[T any](t *testing.T, doc string) T {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	v, err := FromUnstructured[T](&u)
	if err != nil {
		t.Fatal(err)
	}
	return *v
}
