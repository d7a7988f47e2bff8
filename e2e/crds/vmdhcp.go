package crds

import (
	_ "embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
)

// The managed-DHCP add-on's CRDs, mirrored into the repository whole (their headers cite the upstream files and
// commit): the module that publishes them, github.com/harvester/vm-dhcp-controller, is not served by the Go module
// proxy.
var (
	//go:embed mirrored/network.harvesterhci.io_ippools.yaml
	networkIPPoolCRD []byte
	//go:embed mirrored/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml
	vmNetworkConfigCRD []byte
)

// ManagedDHCP returns the CRDs of Harvester's managed DHCP (the vm-dhcp-controller add-on,
// network.harvesterhci.io/v1alpha1, namespaced): IPPool, the addresses of a VM network it leases, and
// VirtualMachineNetworkConfig, a VM's leases. The test bed installs them beside the upstream manifests, and the
// stand-in plays the add-on's controller on them.
func ManagedDHCP() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range []struct {
		name string
		data []byte
	}{{"network.harvesterhci.io_ippools.yaml", networkIPPoolCRD}, {"network.harvesterhci.io_virtualmachinenetworkconfigs.yaml", vmNetworkConfigCRD}} {
		objs, err := apply.Decode(f.data)
		if err == nil && len(objs) != 1 {
			err = fmt.Errorf("holds %d objects, want the CRD alone", len(objs))
		}
		if err != nil {
			return nil, fmt.Errorf("e2e/crds/mirrored/%s: %w", f.name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}
