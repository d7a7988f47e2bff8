// What the cluster page does for the driver named harvester and not for another name, filled in by this form
// into the cluster being created or edited. The rest of Rancher's Harvester cloud-provider setup keys on the
// credential, not on the driver's name: rke2.vue setHarvesterChartValues (rancher/dashboard
// shell/edit/provisioning.cattle.io.cluster/rke2.vue, the same in v2.12.12, v2.13.8, v2.14.4 and v2.15.0) makes
// the cloud-provider config and sets the harvester-cloud-provider chart's global.cattle.clusterName and
// cloudConfigPath whenever the cloud provider is harvester and the credential's decodedData.clusterId is set, which
// the hcivm credential carries (internal/nodedriver: clusterId is a public credential field).
//
// Keyed on the name harvester:
// - the cluster's name as the driver's --harvester-cluster-name: rancher/rancher
//   pkg/controllers/capr/machineprovision/args.go toArgs appends it for that driver only; this form writes it into
//   every pool's clusterName, a new pool of an existing cluster too (fillClusterName);
// - the Harvester cloud provider chosen by default on a new cluster: rke2.vue setHarvesterDefaultCloudProvider runs
//   only when isHarvesterDriver ($route.query.type === 'harvester'), for a credential of type imported; this form
//   chooses it the same way (chooseCloudProvider).
import { clusterIdOf } from './harvester';

export const HARVESTER_CLOUD_PROVIDER = 'harvester';

// agentConfigOf is the cluster's config that applies to every machine: the first machineSelectorConfig entry
// without a selector, as @rancher/shell models/provisioning.cattle.io.cluster.js agentConfig reads it; null when
// the cluster has none yet.
export function agentConfigOf(cluster) {
  const entry = (cluster?.spec?.rkeConfig?.machineSelectorConfig || []).find((x) => !x.machineLabelSelector);

  if (!entry) {
    return null;
  }
  if (!entry.config) {
    entry.config = {};
  }

  return entry.config;
}

export function clusterNameOf(cluster) {
  return cluster?.metadata?.name || '';
}

// fillClusterName sets the machine config's clusterName to the cluster's name; true when it changed it.
export function fillClusterName(cluster, value) {
  const name = clusterNameOf(cluster);

  if (name && value.clusterName !== name) {
    value.clusterName = name;

    return true;
  }

  return false;
}

// chooseCloudProvider chooses the Harvester cloud provider for a new cluster whose credential names an imported
// Harvester cluster, when no cloud provider is chosen yet, as setHarvesterDefaultCloudProvider does for the driver
// named harvester (not for a credential of type external). True when it chose it.
export function chooseCloudProvider(cluster, credential, mode) {
  const agent = agentConfigOf(cluster);

  if (mode !== 'create' || !agent || agent['cloud-provider-name'] || !clusterIdOf(credential) ||
      credential?.decodedData?.clusterType === 'external') {
    return false;
  }
  agent['cloud-provider-name'] = HARVESTER_CLOUD_PROVIDER;

  return true;
}

// rancherMakesCloudConfig is whether setHarvesterChartValues will make this cluster's cloud-provider config.
export function rancherMakesCloudConfig(cluster, credential) {
  return agentConfigOf(cluster)?.['cloud-provider-name'] === HARVESTER_CLOUD_PROVIDER && !!credential?.decodedData?.clusterId;
}
