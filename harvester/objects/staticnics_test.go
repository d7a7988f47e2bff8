package objects

import (
	"reflect"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"
)

// An entry matched by a NIC's MAC address addresses that NIC alone; one matched by name may address any; one
// matched by a MAC address no NIC was given addresses none of them (Harvester gives the others random ones); DHCP
// addresses nothing.
func TestStaticallyAddressedNICs(t *testing.T) {
	vm := &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{}}}
	vm.Spec.Template.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "nic-0"}, {Name: "nic-1", MacAddress: "52:54:00:00:00:01"}}
	for _, c := range []struct {
		name, doc string
		want      map[string][]string
	}{
		{"none", "", nil},
		{"DHCP", "version: 2\nethernets:\n  eth0: {dhcp4: true}\n", nil},
		{"nic-1's MAC", "version: 2\nethernets:\n  lan:\n    match: {macaddress: '52:54:00:00:00:01'}\n    addresses: [10.0.0.5/24]\n",
			map[string][]string{"nic-1": {"ethernets.lan"}}},
		{"another MAC", "version: 2\nethernets:\n  lan:\n    match: {macaddress: '52:54:00:00:00:09'}\n    addresses: [10.0.0.5/24]\n", map[string][]string{}},
		{"by name", "version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.5/24]\n",
			map[string][]string{"nic-0": {"ethernets.eth0"}, "nic-1": {"ethernets.eth0"}}},
	} {
		got, err := StaticallyAddressedNICs(vm, []byte(c.doc))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
