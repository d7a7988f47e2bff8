package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// harvesterValues is the Harvester chart's values file, whose kubevirt.spec is the spec of the KubeVirt resource
// the chart installs.
const harvesterValues = "deploy/charts/harvester/values.yaml"

// HarvesterKubeVirt returns the KubeVirt resource Harvester installs: harvester-system/kubevirt (pkg/util
// constants.go KubeVirtObjectName) with the spec of the pinned Harvester chart's values (kubevirt.spec: feature
// gates, LiveUpdate rollout, network bindings, ...). Harvester's VM mutator reads it on every VM with memory
// (mutator.go isARMArchitecture) and refuses the VM without it; KubeVirt's controllers take their configuration
// from it (the kubevirt controller tool keeps an existing one and checks it is Harvester's).
func HarvesterKubeVirt(ctx context.Context) (*unstructured.Unstructured, error) {
	mod, err := repo.ModuleDir(ctx, HarvesterModule)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, harvesterValues))
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", harvesterValues, mod, err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%s from %s: %w", harvesterValues, mod, err)
	}
	spec, found, err := unstructured.NestedMap(values, "kubevirt", "spec")
	if err != nil || !found {
		return nil, fmt.Errorf("%s from %s has no kubevirt.spec (%v)", harvesterValues, mod, err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "KubeVirt",
		"metadata":   map[string]any{"name": "kubevirt", "namespace": "harvester-system"},
		"spec":       spec,
	}}, nil
}
