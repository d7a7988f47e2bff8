package objects

import (
	"net"
	"slices"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
)

// StaticallyAddressedNICs tells, for each interface of vm (the VM as built, --harvester-vm-patch applied) by name,
// the entries of the network data doc that may give it static addresses: an entry matched by the interface's MAC
// address (the one --harvester-network-info or the patch gives it; without one Harvester picks a random one, which
// no entry can name), and every entry matched otherwise — by name or driver, which may be any NIC's, since the
// names a guest gives its NICs are not known before it boots. An interface the data leaves alone is not in the
// map. doc must have passed networkconfig.Validate (config does it).
func StaticallyAddressedNICs(vm *kubevirtv1.VirtualMachine, doc []byte) (map[string][]string, error) {
	entries, err := networkconfig.StaticallyAddressed(doc)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	out := map[string][]string{}
	for _, nic := range vm.Spec.Template.Spec.Domain.Devices.Interfaces {
		mac := ""
		if hw, err := net.ParseMAC(nic.MacAddress); err == nil {
			mac = hw.String()
		}
		for _, e := range entries {
			if e.MACs == nil || (mac != "" && slices.Contains(e.MACs, mac)) {
				out[nic.Name] = append(out[nic.Name], e.Path)
			}
		}
	}
	return out, nil
}
