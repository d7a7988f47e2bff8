package scenarios

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/crds"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

const (
	gpuResource = "nvidia.com/GA102GL_A10"
	nicResource = "intel.com/ETHERNET_CONTROLLER_X710_FOR_10GBE_SFP"
	usbResource = "kubevirt.io/harvester-node-0-0951-1666-001002"
)

// Host devices, labels and strategies through the real rancher-machine: without the pcidevices-controller
// add-on a machine with host devices is refused before anything is made; with it, a missing device or one
// without passthrough is refused the same way, bad labels and strategies are refused naming their flag, and a
// good machine's VM, template and VMI carry the devices, the labels and both strategies.
func TestHostDevicesLabelsAndStrategies(t *testing.T) {
	b := testbed.Shared(t)
	ctx := context.Background()
	hostDevices := func(names ...string) string {
		var entries []string
		for i, n := range names {
			entries = append(entries, `{"name":"dev`+string(rune('a'+i))+`","deviceName":"`+n+`"}`)
		}
		return `{"hostDevices":[` + strings.Join(entries, ",") + `]}`
	}
	refused := func(t *testing.T, extra []string, want ...string) {
		t.Helper()
		ns := b.Namespace(t)
		r := newCLI(t, b.AdminKubeconfig()).run(append(createArgs(t, ns, extra...), "m1")...)
		if r.Err == nil {
			t.Fatalf("create succeeded: %s", r)
		}
		t.Logf("what the user sees:\n%s", r.Output)
		for _, w := range want {
			if !strings.Contains(r.Output, w) {
				t.Errorf("the error does not say %q:\n%s", w, r.Output)
			}
		}
		nothingLeft(t, b, ns)
	}

	// The default bed is a Harvester without the add-on.
	t.Run("add-on not enabled", func(t *testing.T) {
		refused(t, []string{"--harvester-host-device-info", hostDevices(gpuResource)},
			"--harvester-host-device-info: Harvester does not serve PCI or USB devices (no devices.harvesterhci.io API): the pcidevices-controller add-on is not enabled")
	})

	installDeviceAddOn(t, b)
	t.Run("missing and disabled devices", func(t *testing.T) {
		refused(t, []string{"--harvester-host-device-info", hostDevices("nvidia.com/TU104GL_T4", nicResource)},
			"hostDevices[0] (deva): no PCI or USB device in Harvester has resource name nvidia.com/TU104GL_T4 (passthrough is enabled for "+
				usbResource+" and "+gpuResource+")",
			"hostDevices[1] (devb): "+nicResource+" is the resource name of PCI harvester-node-0/0000:3b:00.0, but passthrough is enabled on none")
	})
	t.Run("bad labels and strategies", func(t *testing.T) {
		refused(t, []string{"--harvester-vm-labels", "harvesterhci.io/creator=me,team=m l",
			"--harvester-eviction-strategy", "Migrate", "--harvester-maintenance-strategy", "Reboot"},
			"--harvester-vm-labels: label harvesterhci.io/creator is set by the driver",
			`--harvester-vm-labels: label team: "m l" is not a Kubernetes label value`,
			"--harvester-eviction-strategy: must be one of LiveMigrateIfPossible, LiveMigrate, None or External",
			"--harvester-maintenance-strategy: must be one of Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable or Shutdown")
	})

	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	name := "gc1-gpu-abcde-fghij"
	cli.must(append(createArgs(t, ns, "--harvester-cluster-name", "gc1",
		"--harvester-host-device-info", hostDevices(gpuResource, usbResource),
		"--harvester-vm-labels", "team=ml,example.com/cost-center=42",
		"--harvester-eviction-strategy", "None", "--harvester-maintenance-strategy", "ShutdownAndRestartAfterDisable"), name)...)

	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi := vmiRunning(t, b, ns, name)
	wantLabels := map[string]string{"team": "ml", "example.com/cost-center": "42", "harvesterhci.io/maintain-mode-strategy": "ShutdownAndRestartAfterDisable",
		"harvesterhci.io/creator": "docker-machine-driver-harvester", "guestcluster.harvesterhci.io/name": "gc1"}
	for where, labels := range map[string]map[string]string{"VM": vm.Labels, "template": vm.Spec.Template.ObjectMeta.Labels, "VMI": vmi.Labels} {
		for k, v := range wantLabels {
			if labels[k] != v {
				t.Errorf("%s label %s=%q, want %q", where, k, labels[k], v)
			}
		}
	}
	spec := vm.Spec.Template.Spec
	want := []kubevirtv1.HostDevice{{Name: "deva", DeviceName: gpuResource}, {Name: "devb", DeviceName: usbResource}}
	if got := spec.Domain.Devices.HostDevices; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("host devices %+v, want %+v", got, want)
	}
	if spec.EvictionStrategy == nil || *spec.EvictionStrategy != kubevirtv1.EvictionStrategyNone {
		t.Errorf("eviction strategy %v, want None", spec.EvictionStrategy)
	}
	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
}

// Two machines ask for the only device of a kind: the first is created and its VMI placed on the device's host;
// the second is refused before anything is made, naming the device, its host's count and the VM that holds it.
func TestDeviceCapacity(t *testing.T) {
	b := testbed.Shared(t)
	installDeviceAddOn(t, b)
	gpu := []string{"--harvester-host-device-info", `{"hostDevices":[{"name":"gpu","deviceName":"` + gpuResource + `"}]}`}

	ns := b.Namespace(t)
	first := newCLI(t, b.AdminKubeconfig())
	first.must(append(createArgs(t, ns, gpu...), "gpu-first")...)
	if vmi := vmiRunning(t, b, ns, "gpu-first"); vmi.Status.NodeName != deviceHost {
		t.Errorf("the VMI is on %s, want the device's host %s", vmi.Status.NodeName, deviceHost)
	}

	ns2 := b.Namespace(t)
	r := newCLI(t, b.AdminKubeconfig()).run(append(createArgs(t, ns2, gpu...), "gpu-second")...)
	if r.Err == nil {
		t.Fatalf("create succeeded: %s", r)
	}
	t.Logf("what the user sees:\n%s", r.Output)
	want := "--harvester-host-device-info: " + gpuResource + ": 1 requested, none free (" + deviceHost + ": 1 allocatable, 1 in use by " + ns +
		"/gpu-first; harvester-node-1: 0; harvester-node-2: 0); stop a VM that holds one"
	if !strings.Contains(r.Output, want) {
		t.Errorf("the error does not say %q:\n%s", want, r.Output)
	}
	nothingLeft(t, b, ns2)

	first.must("rm", "-y", "gpu-first")
	nothingLeft(t, b, ns)

	// Two at once may both pass the pre-flight check; then the later VMI is unschedulable for the device and its
	// create fails at once, naming the device, and is rolled back. Either way exactly one machine is made.
	t.Run("two at once", func(t *testing.T) {
		ns := b.Namespace(t)
		names := []string{"gpu-a", "gpu-b"}
		cli := []*machineCLI{newCLI(t, b.AdminKubeconfig()), newCLI(t, b.AdminKubeconfig())}
		results := make([]rmachine.Result, 2)
		var wg sync.WaitGroup
		for i := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = cli[i].runWithin(3*time.Minute, append(createArgs(t, ns, gpu...), names[i])...)
			}()
		}
		wg.Wait()
		made, refused := -1, -1
		for i, r := range results {
			if r.Err == nil {
				made = i
			} else {
				refused = i
			}
		}
		if made < 0 || refused < 0 {
			t.Fatalf("want one machine made and one refused:\n%s\n%s", results[0], results[1])
		}
		out := results[refused].Output
		t.Logf("what the refused user sees:\n%s", out)
		if !strings.Contains(out, gpuResource+": 1 requested, none free") && !strings.Contains(out, "no Harvester host has a free "+gpuResource+" for the VM (ErrorUnschedulable)") {
			t.Errorf("the error does not name the device:\n%s", out)
		}
		vmiGone(t, b, ns, names[refused])
		cli[made].must("rm", "-y", names[made])
		nothingLeft(t, b, ns)
	})
}

// installDeviceAddOn gives the shared bed the add-on's CRDs (crds.DeviceAddOn) until the test ends, with what
// the add-on would have found on a host: a GPU with passthrough enabled (its PCIDeviceClaim), a NIC without, and
// a USB stick enabled.
func installDeviceAddOn(t *testing.T, b *testbed.Bed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defs := crds.DeviceAddOn()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := crds.Remove(ctx, b.AdminConfig(), defs); err != nil {
			t.Errorf("remove the device add-on's CRDs: %v", err)
		}
	})
	if err := crds.Install(ctx, b.AdminConfig(), defs); err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(b.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	object := func(kind, name string, fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"apiVersion": crds.DevicesGroup + "/v1beta1", "kind": kind, "metadata": map[string]any{"name": name}}
		for k, v := range fields {
			obj[k] = v
		}
		return &unstructured.Unstructured{Object: obj}
	}
	// The add-on writes devices' and claims' status through the status subresource, as these do: each object is
	// made first, then its status is set.
	for _, obj := range []*unstructured.Unstructured{
		object("PCIDevice", "harvester-node-0-000017000", map[string]any{"status": map[string]any{"address": "0000:17:00.0", "nodeName": "harvester-node-0",
			"resourceName": gpuResource, "vendorId": "10de", "deviceId": "2236", "description": "3D controller: NVIDIA Corporation GA102GL [A10]"}}),
		object("PCIDevice", "harvester-node-0-00003b000", map[string]any{"status": map[string]any{"address": "0000:3b:00.0", "nodeName": "harvester-node-0",
			"resourceName": nicResource, "vendorId": "8086", "deviceId": "1572"}}),
		object("PCIDeviceClaim", "harvester-node-0-000017000", map[string]any{"spec": map[string]any{"address": "0000:17:00.0", "nodeName": "harvester-node-0", "userName": "admin"},
			"status": map[string]any{"passthroughEnabled": true, "kernelDriverToUnbind": "nvidia"}}),
		object("USBDevice", "harvester-node-0-0951-1666-001002", map[string]any{"status": map[string]any{"nodeName": "harvester-node-0", "resourceName": usbResource,
			"vendorID": "0951", "productID": "1666", "enabled": true}}),
	} {
		if _, err := a.Apply(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if _, err := a.ApplyStatus(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// The device plugins the add-on runs for enabled devices register them with kubelet, which reports one of
	// each on the host's status; the NIC, without passthrough, has none.
	setDeviceAllocatable(t, b, map[string]any{gpuResource: "1", usbResource: "1"})
	t.Cleanup(func() { setDeviceAllocatable(t, b, map[string]any{gpuResource: nil, usbResource: nil}) })
}

// deviceHost is the host the add-on's devices are on.
const deviceHost = "harvester-node-0"

// setDeviceAllocatable sets (or, with nil, removes) device resources in deviceHost's capacity and allocatable.
func setDeviceAllocatable(t *testing.T, b *testbed.Bed, resources map[string]any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": resources, "allocatable": resources}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Kube.CoreV1().Nodes().Patch(context.Background(), deviceHost, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}
