package main

import (
	"fmt"
	"slices"

	v1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/testutils"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
)

// harvesterKubeVirtConfiguration is the KubeVirt configuration Harvester installs, copied from
// harvester/harvester deploy/charts/harvester/values.yaml (v1.8.2), kubevirt.spec.configuration. Its feature
// gates are what the admitter lets VMs use: CPUManager (dedicated CPUs), HostDevices (PCI passthrough, vGPU),
// and so on; everything else is KubeVirt's default.
const harvesterKubeVirtConfiguration = `
vmStateStorageClass: "vmstate-persistence"
developerConfiguration:
  featureGates:
    - CPUManager
    - DeclarativeHotplugVolumes
    - ExpandDisks
    - EnableVirtioFsConfigVolumes
    - HostDevices
vmRolloutStrategy: "LiveUpdate"
network:
  defaultNetworkInterface: "bridge"
  permitSlirpInterface: true
  permitBridgeInterfaceOnPodNetwork: true
  binding:
    managedtap:
      domainAttachmentType: managedTap
`

// clusterConfig returns KubeVirt's cluster configuration as virt-api would see it with Harvester's KubeVirt
// resource, built by KubeVirt's own helper (pkg/testutils/mock_config.go) instead of informers on a cluster.
// KubeVirt falls back to its defaults, with only a log line, when a configuration does not apply; that is
// checked here.
func clusterConfig() (*virtconfig.ClusterConfig, error) {
	want, err := harvesterConfiguration()
	if err != nil {
		return nil, err
	}
	cfg, _, _ := testutils.NewFakeClusterConfigUsingKVConfig(want.DeepCopy())
	if err := checkHarvesterConfig(cfg, want); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkHarvesterConfig fails when cfg is not Harvester's configuration want: KubeVirt falls back to its defaults,
// with only a log line, when a configuration does not apply.
func checkHarvesterConfig(cfg *virtconfig.ClusterConfig, want *v1.KubeVirtConfiguration) error {
	got := cfg.GetConfig()
	for _, gate := range want.DeveloperConfiguration.FeatureGates {
		if !slices.Contains(got.DeveloperConfiguration.FeatureGates, gate) {
			return fmt.Errorf("KubeVirt did not take Harvester's configuration: feature gate %s is off (gates on: %v)",
				gate, got.DeveloperConfiguration.FeatureGates)
		}
	}
	if !cfg.IsVMRolloutStrategyLiveUpdate() {
		return fmt.Errorf("KubeVirt did not take Harvester's configuration: vmRolloutStrategy is not LiveUpdate")
	}
	return nil
}

// harvesterConfiguration decodes harvesterKubeVirtConfiguration, refusing unknown fields.
func harvesterConfiguration() (*v1.KubeVirtConfiguration, error) {
	var c v1.KubeVirtConfiguration
	if err := yaml.UnmarshalStrict([]byte(harvesterKubeVirtConfiguration), &c); err != nil {
		return nil, fmt.Errorf("Harvester's KubeVirt configuration: %w", err)
	}
	return &c, nil
}
