package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// HostDevice is one PCI or USB device passed through to the VM: KubeVirt's HostDevice, whose DeviceName is the
// resource name Harvester's pcidevices-controller gives the device (PCIDevice or USBDevice status.resourceName).
type HostDevice struct {
	Name       string
	DeviceName string
	// Tag is KubeVirt's device role tag (HostDevice.Tag): the device's address and the tag are given to the
	// guest in the metadata of a config drive; "" for none.
	Tag string
}

// hostDeviceJSON is one entry of the --harvester-host-device-info document: the format of the reference driver's
// pending change (harvester/docker-machine-driver-harvester PR #96, harvester/harvester#10764), which decodes each
// entry as KubeVirt's HostDevice. These are all of its fields at the pinned kubevirt.io/api (core/v1 schema.go:
// HostDevice with its inline ClaimRequest); claimName and requestName are read only to be refused by name.
type hostDeviceJSON struct {
	Name        string `json:"name"`
	DeviceName  string `json:"deviceName"`
	Tag         string `json:"tag"`
	ClaimName   string `json:"claimName"`
	RequestName string `json:"requestName"`
}

type hostDeviceInfoJSON struct {
	HostDevices []hostDeviceJSON `json:"hostDevices"`
}

const hostDeviceInfoExample = `{"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10"}]}`

// parseHostDevices reads --harvester-host-device-info, as JSON or base64 of JSON. Unknown fields are refused (a
// misspelt "devicename" would otherwise silently drop the device). Names must be DNS-1123 labels, unique among
// the host devices and the vGPUs named by the user (both become KubeVirt host devices; Rancher's placeholder
// vGPU names are made unique around them by nameDevices); device names must be resource names.
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
		if !g.placeholder {
			vgpuNames[g.Name] = true
		}
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
		if err := checkTag(hd.Tag); err != nil {
			p.Addf(FlagHostDeviceInfo, "hostDevices[%d].tag %v", i, err)
		}
		// KubeVirt's DRA fields name a request of a ResourceClaim in the VMI's spec.resourceClaims, which the
		// driver does not make, and need the HostDevicesWithDRA feature gate (kubevirt/kubevirt
		// pkg/virt-config/featuregate/active.go), which Harvester's KubeVirt configuration does not turn on
		// (harvester/harvester deploy/charts/harvester/values.yaml). Harvester's devices are device-plugin
		// resources, named by deviceName.
		for _, f := range [][2]string{{"claimName", hd.ClaimName}, {"requestName", hd.RequestName}} {
			if f[1] != "" {
				p.Addf(FlagHostDeviceInfo, "hostDevices[%d].%s is not supported: it names a DRA resource claim, which needs KubeVirt's HostDevicesWithDRA feature gate (off in Harvester) and a resource claim the driver does not make; name the device by deviceName", i, f[0])
			}
		}
		devices = append(devices, HostDevice{Name: hd.Name, DeviceName: hd.DeviceName, Tag: hd.Tag})
	}
	return devices
}

// maxTagLength bounds a device role tag: it travels in the VMI's metadata and the guest's config drive; KubeVirt
// sets no limit, so this is the driver's, generous for a role name.
const maxTagLength = 63

// checkTag checks a device role tag: printable ASCII without spaces, as a role name in cloud-init's metadata.
func checkTag(tag string) error {
	if len(tag) > maxTagLength {
		return fmt.Errorf("must be at most %d characters, got %d", maxTagLength, len(tag))
	}
	for _, r := range tag {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("must be printable ASCII without spaces (a role name like gpu-compute), got %q", tag)
		}
	}
	return nil
}

// vgpuPlaceholder is the name Rancher's Harvester form gives every vGPU request: a placeholder, the real name
// being assigned by Harvester (rancher/dashboard pkg/harvester-manager/machine-config/harvester.vue, updateVGpu).
const vgpuPlaceholder = "provisioned"

// nameDevices makes the placeholder names of vGPUs unique, in order: the first keeps "provisioned", the others
// become provisioned-1, provisioned-2, …, each name skipping every name already taken by a vGPU or host device the
// user named (a placeholder meeting such a name moves on too). KubeVirt's admitter lets equal names through, but
// they become the domain's device aliases, which libvirt needs unique: two "provisioned" vGPUs never start.
func nameDevices(vgpus []VGPU, hostDevices []HostDevice) {
	taken := map[string]bool{}
	for _, g := range vgpus {
		if !g.placeholder {
			taken[g.Name] = true
		}
	}
	for _, h := range hostDevices {
		taken[h.Name] = true
	}
	next := 0
	for i := range vgpus {
		if !vgpus[i].placeholder {
			continue
		}
		for {
			name := vgpuPlaceholder
			if next > 0 {
				name = fmt.Sprintf("%s-%d", vgpuPlaceholder, next)
			}
			next++
			if !taken[name] {
				vgpus[i].Name = name
				taken[name] = true
				break
			}
		}
	}
}

// isResourceName reports whether v is an extended resource name with its vendor prefix: domain/name, as device
// plugins register them.
func isResourceName(v string) bool {
	prefix, _, ok := strings.Cut(v, "/")
	return ok && strings.Contains(prefix, ".") && len(validation.IsQualifiedName(v)) == 0
}
