package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

const (
	nicResource = "intel.com/ETHERNET_CONTROLLER_X710"
)

// addPCIDevice adds a PCI device of node1 at address with the resource name, and its claim when passthrough is
// enabled.
func (fc *fakeCluster) addPCIDevice(address, resource string, passthrough bool) {
	ctx := context.Background()
	name := "node1-" + strings.NewReplacer(":", "", ".", "").Replace(address)
	dev := &kube.PCIDevice{ObjectMeta: metav1.ObjectMeta{Name: name}}
	dev.Status.Address, dev.Status.NodeName, dev.Status.ResourceName = address, "node1", resource
	fc.OK(kube.Create(ctx, fc.C, kube.PCIDevices, "", dev))
	if passthrough {
		claim := &kube.PCIDeviceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		claim.Spec.Address, claim.Spec.NodeName, claim.Status.PassthroughEnabled = address, "node1", true
		fc.OK(kube.Create(ctx, fc.C, kube.PCIDeviceClaims, "", claim))
	}
}

func (fc *fakeCluster) addUSBDevice(name, resource string, enabled bool) {
	dev := &kube.USBDevice{ObjectMeta: metav1.ObjectMeta{Name: name}}
	dev.Status.NodeName, dev.Status.ResourceName, dev.Status.Enabled = "node1", resource, enabled
	fc.OK(kube.Create(context.Background(), fc.C, kube.USBDevices, "", dev))
}

func hostDeviceOptions(devices ...string) config.Options {
	doc := `{"hostDevices":[`
	for i, d := range devices {
		if i > 0 {
			doc += ","
		}
		doc += `{"name":"dev` + string(rune('a'+i)) + `","deviceName":"` + d + `"}`
	}
	return configtest.With(createOptions(), config.FlagHostDeviceInfo, doc+`]}`)
}

// devicesNotServed makes the API server answer lists of resource as it does for a resource it does not serve.
func (fc *fakeCluster) devicesNotServed(resource string) {
	fc.Dyn.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewGenericServerResponse(404, "list", schema.GroupResource{Group: kube.DevicesGroupVersion.Group, Resource: resource}, "", "", 0, false)
	})
}

func TestPreCreateCheckHostDevicesPass(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addPCIDevice("0000:17:00.0", kubefake.GPUResource, false)
	fc.addPCIDevice("0000:65:00.0", kubefake.GPUResource, true) // one of two is enough
	fc.addUSBDevice("node1-0951-1666-001002", kubefake.USBResource, true)
	d := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource, kubefake.USBResource))
	fc.Dyn.ClearActions()
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	for _, a := range fc.Dyn.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && !strings.HasPrefix(a.GetResource().Resource, "selfsubject") {
			t.Errorf("PreCreateCheck wrote: %s %s", v, a.GetResource().Resource)
		}
	}
}

func TestPreCreateCheckHostDevicesProblems(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addPCIDevice("0000:17:00.0", kubefake.GPUResource, true)
	fc.addPCIDevice("0000:3b:00.0", nicResource, false)
	fc.addUSBDevice("node1-0951-1666-001002", kubefake.USBResource, false)
	d := newTestDriver(t, fc, "m1", hostDeviceOptions("nvidia.com/TU104GL_T4", nicResource, kubefake.USBResource))
	err := d.PreCreateCheck()
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) || len(cerr.Problems) != 3 {
		t.Fatalf("want three problems, got %v", err)
	}
	configtest.WantAll(t, err.Error(),
		"--harvester-host-device-info: hostDevices[0] (deva): no PCI or USB device in Harvester has resource name nvidia.com/TU104GL_T4 "+
			"(passthrough is enabled for nvidia.com/GA102GL_A10); see Advanced → PCI Devices and USB Devices",
		"--harvester-host-device-info: hostDevices[1] (devb): intel.com/ETHERNET_CONTROLLER_X710 is the resource name of PCI node1/0000:3b:00.0, "+
			"but passthrough is enabled on none",
		"hostDevices[2] (devc): kubevirt.io/node1-0951-1666-001002 is the resource name of USB node1/node1-0951-1666-001002, but passthrough is enabled on none")
}

// Without the add-on, Harvester has no devices.harvesterhci.io API at all: the user is told to enable it.
func TestPreCreateCheckHostDevicesAddOnDisabled(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	for _, r := range []string{"pcidevices", "pcideviceclaims", "usbdevices"} {
		fc.devicesNotServed(r)
	}
	d := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource))
	err := d.PreCreateCheck()
	want := "--harvester-host-device-info: Harvester does not serve PCI or USB devices (no devices.harvesterhci.io API): the pcidevices-controller add-on is not enabled; " +
		"enable it (Advanced → Add-ons)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
}

// Add-on versions before USB passthrough serve PCI devices only.
func TestPreCreateCheckHostDevicesWithoutUSBAPI(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.devicesNotServed("usbdevices")
	fc.addPCIDevice("0000:17:00.0", kubefake.GPUResource, true)
	if err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.USBResource)).PreCreateCheck()
	if err == nil || !strings.Contains(err.Error(), "no PCI or USB device in Harvester has resource name "+kubefake.USBResource) {
		t.Fatalf("got %v", err)
	}
}

// A credential that may not read the devices is not blocked; one that may not read the claims gets no verdict
// on passthrough. Other failures are reported as what they are.
func TestPreCreateCheckHostDevicesReadFailures(t *testing.T) {
	t.Run("devices forbidden", func(t *testing.T) {
		fc := newFakeCluster(t)
		logs := kubefake.CaptureLog(t)
		fc.FailOn("list", "pcidevices", apierrors.NewForbidden(schema.GroupResource{Group: kube.DevicesGroupVersion.Group, Resource: "pcidevices"}, "", errors.New("no")))
		if err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "the credential may not list pcidevices.devices.harvesterhci.io") {
			t.Errorf("no debug line:\n%s", logs)
		}
	})
	t.Run("claims forbidden", func(t *testing.T) {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		fc.addPCIDevice("0000:17:00.0", kubefake.GPUResource, false)
		fc.FailOn("list", "pcideviceclaims", apierrors.NewForbidden(schema.GroupResource{Group: kube.DevicesGroupVersion.Group, Resource: "pcideviceclaims"}, "", errors.New("no")))
		if err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("server error", func(t *testing.T) {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		fc.FailOn("list", "usbdevices", apierrors.NewInternalError(errors.New("etcd is sad")))
		err := newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)).PreCreateCheck()
		if err == nil || !strings.Contains(err.Error(), "--harvester-host-device-info: cannot list usbdevices.devices.harvesterhci.io: ") ||
			!strings.Contains(err.Error(), "etcd is sad") {
			t.Fatalf("got %v", err)
		}
	})
}
