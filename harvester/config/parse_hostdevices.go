package config

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// HostDevice is one PCI or USB device passed through to the VM: KubeVirt's HostDevice, whose DeviceName is the
// resource name Harvester's pcidevices-controller gives the device (PCIDevice or USBDevice status.resourceName).
type HostDevice struct {
	Name       string
	DeviceName string
}

// hostDeviceInfoJSON is the --harvester-host-device-info document: the format of the reference driver's pending
// change (harvester/docker-machine-driver-harvester PR #96, harvester/harvester#10764), KubeVirt's HostDevice
// fields.
type hostDeviceInfoJSON struct {
	HostDevices []struct {
		Name       string `json:"name"`
		DeviceName string `json:"deviceName"`
	} `json:"hostDevices"`
}

const hostDeviceInfoExample = `{"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10"}]}`

// parseHostDevices reads --harvester-host-device-info, as JSON or base64 of JSON. Unknown fields are refused (a
// misspelt "devicename" would otherwise silently drop the device). Names must be DNS-1123 labels, unique among
// the host devices and the vGPUs (both become KubeVirt host devices); device names must be resource names.
func parseHostDevices(p *Problems, raw string, vgpus []VGPU) []HostDevice {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	data, _ := userdata.DecodeBase64OrPlain(raw, looksLikeJSONObject)
	var doc hostDeviceInfoJSON
	if err := decodeStrict(data, &doc); err != nil {
		p.Addf(FlagHostDeviceInfo, "%v; want %s", err, hostDeviceInfoExample)
		return nil
	}
	vgpuNames := map[string]bool{}
	for _, g := range vgpus {
		vgpuNames[g.Name] = true
	}
	seen := map[string]bool{}
	devices := make([]HostDevice, 0, len(doc.HostDevices))
	for i, hd := range doc.HostDevices {
		switch {
		case len(validation.IsDNS1123Label(hd.Name)) > 0:
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].name must be a lowercase name of letters, digits and '-' (at most 63), got %q", i, hd.Name)
		case seen[hd.Name]:
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].name %q is used twice; every host device needs its own name", i, hd.Name)
		case vgpuNames[hd.Name]:
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].name %q is also a vGPU's name in --%s; KubeVirt needs every device name to be unique", i, hd.Name, FlagVGPUInfo)
		}
		seen[hd.Name] = true
		if hd.DeviceName == "" {
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].deviceName is required: the device's resource name in Harvester, e.g. nvidia.com/GA102GL_A10", i)
		} else if !isResourceName(hd.DeviceName) {
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].deviceName must be a resource name like nvidia.com/GA102GL_A10 (a vendor domain, '/', a name), got %q", i, hd.DeviceName)
		}
		devices = append(devices, HostDevice{Name: hd.Name, DeviceName: hd.DeviceName})
	}
	return devices
}

// isResourceName reports whether v is an extended resource name with its vendor prefix: domain/name, as device
// plugins register them.
func isResourceName(v string) bool {
	prefix, _, ok := strings.Cut(v, "/")
	return ok && strings.Contains(prefix, ".") && len(validation.IsQualifiedName(v)) == 0
}
