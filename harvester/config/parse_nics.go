package config

import (
	"bytes"
	"fmt"
	"net"
	"slices"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

const (
	interfaceTypeBridge     = "bridge"
	interfaceTypeMasquerade = "masquerade"
)

// nicModels are the interface models KubeVirt accepts (kubevirt.io/api core/v1 Interface.Model).
var nicModels = []string{"virtio", "e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139"}

// networkInfoJSON is the --harvester-network-info document, as Rancher's Harvester UI writes it.
type networkInfoJSON struct {
	Interfaces []rawJSON `json:"interfaces"`
}

type nicJSON struct {
	NetworkName string `json:"networkName"`
	MACAddress  string `json:"macAddress"`
	Model       string `json:"model"`
	Type        string `json:"type"`
	// BootOrder is KubeVirt's Interface.BootOrder: the NIC is tried for network (PXE) boot in that place.
	BootOrder flexInt `json:"bootOrder"`
}

// parseNICs reads --harvester-network-info, or the legacy single-NIC flags when it is empty.
// --harvester-network-type is not read: the reference driver ignored it too (its NIC was always a bridge).
func parseNICs(p *Problems, opts drivers.DriverOptions, namespace string) []NIC {
	raw := opts.String(FlagNetworkInfo)
	if raw == "" {
		return []NIC{parseLegacyNIC(p, opts, namespace)}
	}
	var doc networkInfoJSON
	nics := decodeEntries(p, FlagNetworkInfo, raw, `{"interfaces":[{"networkName":"ns/network","model":"virtio","type":"bridge"}]}`, &doc,
		"interfaces", "interface", func() []rawJSON { return doc.Interfaces },
		func(i int, nj nicJSON) NIC { return nicFromJSON(p, i, nj, namespace) })
	checkMACs(p, nics)
	checkPodNetwork(p, nics)
	return nics
}

// checkPodNetwork rejects a second masquerade interface: each uses the pod network, and KubeVirt connects at
// most one interface to it (kubevirt/kubevirt pkg/network/admitter: "more than one interface is connected to a
// pod network").
func checkPodNetwork(p *Problems, nics []NIC) {
	var first string
	for _, n := range nics {
		if !n.Masquerade {
			continue
		}
		if first != "" {
			p.Addf(FlagNetworkInfo, "%s and %s are both masquerade interfaces; the pod network takes only one", first, n.Name)
			return
		}
		first = n.Name
	}
}

// parseLegacyNIC reads --harvester-network-name and --harvester-network-model: one bridge NIC.
func parseLegacyNIC(p *Problems, opts drivers.DriverOptions, namespace string) NIC {
	nic := NIC{Name: "nic-0", Flag: FlagNetworkName}
	var err error
	if name := opts.String(FlagNetworkName); name == "" {
		p.Addf(FlagNetworkName, "is required when --%s is not given: the Harvester VM network, as namespace/name or name", FlagNetworkInfo)
	} else if nic.Network, err = networkRef(name, namespace); err != nil {
		p.Addf(FlagNetworkName, "%v", err)
	}
	if nic.Model, err = nicModel(opts.String(FlagNetworkModel)); err != nil {
		p.Addf(FlagNetworkModel, "%v", err)
	}
	return nic
}

// nicFromJSON validates entry index of --harvester-network-info.
func nicFromJSON(p *Problems, index int, nj nicJSON, namespace string) NIC {
	nic := NIC{Name: fmt.Sprintf("nic-%d", index), Flag: FlagNetworkInfo}
	field := func(name string, err error) {
		p.Addf(FlagNetworkInfo, "interfaces[%d].%s %v", index, name, err)
	}
	var err error
	switch orDefault(nj.Type, interfaceTypeBridge) {
	case interfaceTypeBridge:
		if nj.NetworkName == "" {
			field("networkName", fmt.Errorf("is required for a bridge interface: a Harvester VM network, as namespace/name or name"))
		} else if nic.Network, err = networkRef(nj.NetworkName, namespace); err != nil {
			field("networkName", err)
		}
	case interfaceTypeMasquerade:
		// KubeVirt's masquerade binding only exists on the pod network; a Multus network cannot carry it.
		nic.Masquerade = true
		if nj.NetworkName != "" {
			field("networkName", fmt.Errorf("must be empty for a masquerade interface (it uses the pod network), got %q", nj.NetworkName))
		}
	default:
		field("type", fmt.Errorf("must be %q or %q, got %q", interfaceTypeBridge, interfaceTypeMasquerade, nj.Type))
	}
	if nic.MACAddress, err = macAddress(nj.MACAddress); err != nil {
		field("macAddress", err)
	}
	if nic.Model, err = nicModel(nj.Model); err != nil {
		field("model", err)
	}
	switch {
	case nj.BootOrder < 0:
		field("bootOrder", fmt.Errorf("must be 0 (not bootable) or a positive whole number, got %d", nj.BootOrder))
	case nj.BootOrder > maxBootOrder:
		field("bootOrder", fmt.Errorf("must be at most %d, got %d", maxBootOrder, nj.BootOrder))
	default:
		nic.BootOrder = uint(nj.BootOrder)
	}
	return nic
}

func networkRef(value, namespace string) (*Ref, error) {
	ref, err := parseRef(value, namespace)
	if err != nil {
		return nil, err
	}
	return &ref, nil
}

// macAddress normalises a unicast EUI-48 address; "" stays "" (Harvester assigns one).
func macAddress(value string) (string, error) {
	if value == "" {
		return "", nil
	}
	hw, err := net.ParseMAC(value)
	switch {
	case err != nil || len(hw) != 6:
		return "", fmt.Errorf("must be a MAC address like 52:54:00:12:34:56, got %q", value)
	case hw[0]&1 == 1:
		return "", fmt.Errorf("%q is a multicast address; a NIC needs a unicast one (even first octet)", value)
	case bytes.Equal(hw, make(net.HardwareAddr, 6)):
		return "", fmt.Errorf("%q is the all-zero address, which no NIC can have; leave it empty for Harvester to assign one", value)
	}
	return hw.String(), nil
}

func nicModel(value string) (string, error) {
	model := orDefault(value, defaultNetworkModel)
	if !slices.Contains(nicModels, model) {
		return model, fmt.Errorf("must be one of %s, got %q", lists.Or(nicModels), value)
	}
	return model, nil
}

// checkMACs rejects a MAC address given to two interfaces.
func checkMACs(p *Problems, nics []NIC) {
	seen := map[string]string{}
	for _, n := range nics {
		if n.MACAddress == "" {
			continue
		}
		if other, dup := seen[n.MACAddress]; dup {
			p.Addf(FlagNetworkInfo, "%s and %s both have macAddress %s", other, n.Name, n.MACAddress)
		}
		seen[n.MACAddress] = n.Name
	}
}

// vgpuInfoJSON is the --harvester-vgpu-info document.
type vgpuInfoJSON struct {
	VGPURequests []struct {
		Name       string `json:"name"`
		DeviceName string `json:"deviceName"`
	} `json:"vGPURequests"`
}

// parseVGPUs reads --harvester-vgpu-info. Names must be DNS-1123 labels and unique, except Rancher's placeholder
// "provisioned", which every vGPU of Rancher's form carries: those are renamed by nameDevices once the host
// devices are known.
func parseVGPUs(p *Problems, raw string) []VGPU {
	if raw == "" {
		return nil
	}
	var doc vgpuInfoJSON
	if err := decodeJSONObject(raw, &doc); err != nil {
		p.Addf(FlagVGPUInfo, "%v; want %s", err, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`)
		return nil
	}
	vgpus := make([]VGPU, 0, len(doc.VGPURequests))
	seen := map[string]int{}
	for i, r := range doc.VGPURequests {
		if msgs := validation.IsDNS1123Label(r.Name); len(msgs) > 0 {
			p.Addf(FlagVGPUInfo, "vGPURequests[%d].name must be a lowercase name of letters, digits and '-', got %q", i, r.Name)
		} else if first, dup := seen[r.Name]; dup && r.Name != vgpuPlaceholder {
			p.Addf(FlagVGPUInfo, "vGPURequests[%d].name %q is also vGPURequests[%d]'s; every vGPU needs its own name (KubeVirt makes each a device of that name)", i, r.Name, first)
		} else if !dup {
			seen[r.Name] = i
		}
		if r.DeviceName == "" {
			p.Addf(FlagVGPUInfo, "vGPURequests[%d].deviceName is required: the device resource, e.g. nvidia.com/NVIDIA_A2-2Q", i)
		} else if !isResourceName(r.DeviceName) {
			p.Addf(FlagVGPUInfo, "vGPURequests[%d].deviceName must be a resource name like nvidia.com/NVIDIA_A2-2Q (a vendor domain, '/', a name), got %q", i, r.DeviceName)
		}
		vgpus = append(vgpus, VGPU{Name: r.Name, DeviceName: r.DeviceName, placeholder: r.Name == vgpuPlaceholder})
	}
	return vgpus
}
