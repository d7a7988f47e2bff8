package crds

import (
	_ "embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
)

// ipPoolCRD is Harvester's load-balancer IPPool CRD, mirrored into the repository (its header cites the upstream
// file and commit): the module that publishes it, github.com/harvester/harvester-load-balancer, is not served by the
// Go module proxy, so it cannot be read from the module cache as package upstream reads Harvester's CRDs.
//
//go:embed mirrored/loadbalancer.harvesterhci.io_ippools.yaml
var ipPoolCRD []byte

// LoadBalancerIPPools returns the IPPool CRD of Harvester's load balancer (loadbalancer.harvesterhci.io/v1beta1,
// cluster-scoped), which every Harvester since v1.2 serves: the test bed installs it beside the upstream
// manifests, so scenarios can create the pools the driver's pre-flight checks static addresses against.
func LoadBalancerIPPools() ([]*unstructured.Unstructured, error) {
	objs, err := apply.Decode(ipPoolCRD)
	if err == nil && len(objs) != 1 {
		err = fmt.Errorf("holds %d objects, want the CRD alone", len(objs))
	}
	if err != nil {
		return nil, fmt.Errorf("e2e/crds/mirrored/loadbalancer.harvesterhci.io_ippools.yaml: %w", err)
	}
	return objs, nil
}
