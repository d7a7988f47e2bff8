package preflight

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// HostDeviceAccess is what checkHostDevices reads: the pcidevices-controller add-on's cluster-scoped devices and
// claims. It is not asked for in the access review: a credential without it is not blocked (the check is then
// skipped with a debug line, and Harvester tells at create time).
var HostDeviceAccess = []kube.Access{
	{Group: kube.DevicesGroupVersion.Group, Resource: "pcidevices", Verb: "list", ClusterScoped: true},
	{Group: kube.DevicesGroupVersion.Group, Resource: "usbdevices", Verb: "list", ClusterScoped: true},
	{Group: kube.DevicesGroupVersion.Group, Resource: "pcideviceclaims", Verb: "list", ClusterScoped: true},
}

// deviceList is what one list of the add-on's resources gave.
type deviceList[T any] struct {
	items  []T
	known  bool // read; false when not allowed or, for optional lists, absent
	absent bool // the API server does not serve the resource: the add-on is not enabled
}

// listDevices lists the add-on's resources of kind k (access says which, for messages). Not being allowed is no
// problem; any failure but absence is recorded when required, else only logged.
func listDevices[T any](ctx context.Context, c kube.Interface, k kube.Kind[T], access kube.Access, required bool, p *config.Problems, u *unchecked) (deviceList[T], bool) {
	items, err := kube.List(ctx, c, k, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case err == nil:
		return deviceList[T]{items: items, known: true}, true
	case apierrors.IsForbidden(err):
		u.addf("the credential may not %s.%s: host devices not checked against them", access, access.Group)
		return deviceList[T]{}, true
	case apierrors.IsNotFound(err):
		// A list is never "not found" but for a resource the API server does not serve.
		return deviceList[T]{absent: true}, true
	case required:
		p.Addf(config.FlagHostDeviceInfo, "%v", c.Explain(access.Verb, access.Resource+"."+access.Group, err))
		return deviceList[T]{}, false
	default:
		u.addf("cannot %s.%s (%v): host devices not checked against them", access, access.Group, config.Redact(err.Error()))
		return deviceList[T]{}, true
	}
}

// devicesGiven reports whether the machine's VM passes devices through: --harvester-host-device-info's,
// --harvester-vgpu-info's, or --harvester-vm-patch's.
func devicesGiven(in *Input) bool { return len(vmDevices(in.Machine)) > 0 }

// checkDevices is the host devices' check, of the devices the VM passes through (vmDevices): they are there to
// pass through, and the hosts have them free. The capacity is asked only of devices the first part found usable.
func checkDevices(ctx context.Context, r *run) {
	devices := vmDevices(r.in.Machine)
	checkHostDevices(ctx, r, devices)
	checkDeviceCapacity(ctx, r, devices)
}

// checkHostDevices makes sure every --harvester-host-device-info device the VM passes through is there to pass
// through: Harvester's pcidevices-controller add-on is enabled (it serves devices.harvesterhci.io), some PCI or USB
// device has the resource name, and passthrough is enabled on one of them (a PCIDeviceClaim with
// passthroughEnabled, or a USB device's enabled). Otherwise the VM would be created and never scheduled. A device
// a VM patch adds may be a vGPU as well as a PCI or USB device: only its capacity is checked. It creates nothing.
func checkHostDevices(ctx context.Context, r *run, devices []vmDevice) {
	var wanted []config.HostDevice
	for _, hd := range r.cfg.HostDevices {
		if slices.Contains(devices, vmDevice{hd.Name, hd.DeviceName, config.FlagHostDeviceInfo}) {
			wanted = append(wanted, hd)
		}
	}
	if len(wanted) == 0 {
		return
	}
	pcis, ok := listDevices(ctx, r.c, kube.PCIDevices, HostDeviceAccess[0], true, &r.p, &r.u)
	if !ok {
		return
	}
	if pcis.absent {
		r.p.Addf(config.FlagHostDeviceInfo, "Harvester does not serve PCI or USB devices (no devices.harvesterhci.io API): the pcidevices-controller add-on is not enabled; "+
			"enable it (Advanced → Add-ons), then enable passthrough on the devices (Advanced → PCI Devices or USB Devices)")
		return
	}
	usbs, ok := listDevices(ctx, r.c, kube.USBDevices, HostDeviceAccess[1], true, &r.p, &r.u)
	if !ok {
		return
	}
	usbs.known = usbs.known || usbs.absent // add-on versions before USB passthrough have no USB devices
	claims, _ := listDevices(ctx, r.c, kube.PCIDeviceClaims, HostDeviceAccess[2], false, &r.p, &r.u)
	if !pcis.known && !usbs.known {
		return
	}

	// Where each resource name is found, and whether passthrough is on for it somewhere.
	found := map[string][]string{}
	enabled := map[string]bool{}
	claimed := map[string]bool{}
	for _, cl := range claims.items {
		if cl.Status.PassthroughEnabled {
			claimed[cl.Spec.NodeName+"/"+cl.Spec.Address] = true
		}
	}
	if pcis.known {
		r.found.pciClasses = map[string]string{}
	}
	for _, dev := range pcis.items {
		if _, seen := r.found.pciClasses[dev.Status.ResourceName]; !seen && pcis.known {
			r.found.pciClasses[dev.Status.ResourceName] = dev.Status.ClassID
		}
		at := dev.Status.NodeName + "/" + dev.Status.Address
		found[dev.Status.ResourceName] = append(found[dev.Status.ResourceName], "PCI "+at)
		enabled[dev.Status.ResourceName] = enabled[dev.Status.ResourceName] || claimed[at]
	}
	for _, dev := range usbs.items {
		found[dev.Status.ResourceName] = append(found[dev.Status.ResourceName], "USB "+dev.Status.NodeName+"/"+dev.Name)
		enabled[dev.Status.ResourceName] = enabled[dev.Status.ResourceName] || dev.Status.Enabled
	}
	// A PCI device's passthrough cannot be told without its claims.
	enabledKnown := claims.known || !pcis.known

	for i, hd := range wanted {
		where := found[hd.DeviceName]
		switch {
		case len(where) == 0 && pcis.known && usbs.known:
			r.p.Addf(config.FlagHostDeviceInfo, "hostDevices[%d] (%s): no PCI or USB device in Harvester has resource name %s%s; see Advanced → PCI Devices and USB Devices",
				i, hd.Name, hd.DeviceName, enabledHint(enabled, enabledKnown))
		case len(where) > 0 && enabledKnown && !enabled[hd.DeviceName]:
			r.p.Addf(config.FlagHostDeviceInfo, "hostDevices[%d] (%s): %s is the resource name of %s, but passthrough is enabled on none; "+
				"enable it in Harvester (Advanced → PCI Devices or USB Devices → Enable Passthrough)", i, hd.Name, hd.DeviceName, lists.Join(where, "and"))
		case len(where) == 0:
			logging.Debugf("Host device %s not found among the devices the credential may read", hd.DeviceName)
		}
	}
}

// enabledHint names the resource names that have passthrough enabled, for a user who picked another.
func enabledHint(enabled map[string]bool, known bool) string {
	if !known {
		return ""
	}
	var names []string
	for name, on := range enabled {
		if on {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return " (no device has passthrough enabled)"
	}
	return fmt.Sprintf(" (passthrough is enabled for %s)", lists.Join(lists.SortedUnique(names), "and"))
}
