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
//   a new pool's clusterName, on the create page or added to an existing cluster (fillClusterName), and offers it
//   to a saved pool that lacks it (savedPoolGaps): writing it there would replace the pool's machines;
// - the Harvester cloud provider chosen by default on a new cluster, and refused for a pasted kubeconfig or a
//   Kubernetes version whose charts Harvester does not support: rke2.vue setHarvesterDefaultCloudProvider,
//   cloudProviderOptions and handleKubernetesChange run only when isHarvesterDriver ($route.query.type ===
//   'harvester'); this form makes the same choices (chooseCloudProvider, cloudProviderProblem, versions.js).
import { _CREATE, _VIEW } from '@shell/config/query-params';
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

// isNewPool is whether the pool is one Rancher has not saved yet: every pool of the create page, a pool added on
// the edit page (poolCreateMode, MachinePool.vue's :pool-create-mode="value.create"), or, where the page does not
// say, a config without an id (rke2.vue saveMachinePools saves a pool's config once, giving it its id).
export function isNewPool(mode, poolCreateMode, value) {
  if (mode === _VIEW) {
    return false;
  }
  if (mode === _CREATE) {
    return true;
  }
  if (typeof poolCreateMode === 'boolean') {
    return poolCreateMode;
  }

  return !value?.id && !value?.metadata?.name;
}

// savedPoolGaps is what a saved pool lacks that the form writes into a new one, each {field, want, had}: the
// cluster's name as clusterName, and a later pool's namespace being the first pool's (firstNamespace, '' for the
// first pool).
export function savedPoolGaps(value, clusterName, firstNamespace) {
  const out = [];

  if (clusterName && (value.clusterName || '') !== clusterName) {
    out.push({ field: 'clusterName', want: clusterName, had: value.clusterName || '' });
  }
  if (firstNamespace && (value.vmNamespace || '') !== firstNamespace) {
    out.push({ field: 'vmNamespace', want: firstNamespace, had: value.vmNamespace || '' });
  }

  return out;
}

// isExternal is whether the credential holds a pasted kubeconfig (isHarvesterExternalCredential, read from the
// hcivm credential's fields).
export function isExternal(credential) {
  return credential?.decodedData?.clusterType === 'external';
}

// chooseCloudProvider is setHarvesterDefaultCloudProvider, which the page runs when the credential is chosen, for a
// new cluster: the Harvester cloud provider when none is chosen yet, the credential names an imported Harvester
// cluster and the Kubernetes version is compatible (versions.js incompatible); Harvester chosen is taken back for
// a pasted kubeconfig or an incompatible version, where Rancher disables the option. Rancher's else branch takes
// back any choice; this one only Harvester: another choice is the admin's, and the page offers it to hcivm. True
// when it changed the choice.
export function chooseCloudProvider(cluster, credential, mode, incompatible = false) {
  const agent = agentConfigOf(cluster);

  if (mode !== _CREATE || !agent) {
    return false;
  }
  const chosen = agent['cloud-provider-name'];
  const refused = isExternal(credential) || incompatible;

  if (!chosen && !refused && clusterIdOf(credential)) {
    agent['cloud-provider-name'] = HARVESTER_CLOUD_PROVIDER;

    return true;
  }

  return chosen === HARVESTER_CLOUD_PROVIDER && refused ? takeBack(agent) : false;
}

// versionChanged is handleKubernetesChange: on a new cluster, a Kubernetes version Harvester does not support takes
// the Harvester cloud provider back; a supported one chooses nothing. True when it changed the choice.
export function versionChanged(cluster, mode, incompatible) {
  const agent = agentConfigOf(cluster);

  return mode === _CREATE && incompatible && agent?.['cloud-provider-name'] === HARVESTER_CLOUD_PROVIDER ? takeBack(agent) : false;
}

function takeBack(agent) {
  agent['cloud-provider-name'] = '';

  return true;
}

// makesOwnCloudConfig is whether the pool's machines get the cloud provider's kubeconfig from the driver
// (generateCloudProviderConfig or cloudProviderConfig), the way a cluster whose credential holds a pasted
// kubeconfig gets one (docs/cloud-provider.md).
export function makesOwnCloudConfig(value) {
  return value?.generateCloudProviderConfig === true || value?.generateCloudProviderConfig === 'true' || !!value?.cloudProviderConfig;
}

// cloudProviderProblem is why the Harvester cloud provider chosen for the cluster cannot work, as an l10n key of
// hcivm.machineConfig.errors, or '': an incompatible Kubernetes version (Rancher disables Harvester then),
// or a credential of a pasted kubeconfig when the pool's machines get no cloud provider kubeconfig from the driver
// either (Rancher disables Harvester for a pasted kubeconfig of its own driver, which cannot make one).
export function cloudProviderProblem(cluster, credential, value, incompatible) {
  if (agentConfigOf(cluster)?.['cloud-provider-name'] !== HARVESTER_CLOUD_PROVIDER) {
    return '';
  }
  if (incompatible) {
    return 'cloudProviderIncompatible';
  }
  if (isExternal(credential) && !makesOwnCloudConfig(value)) {
    return 'cloudProviderExternal';
  }

  return '';
}

// rancherMakesCloudConfig is whether setHarvesterChartValues will make this cluster's cloud-provider config.
export function rancherMakesCloudConfig(cluster, credential) {
  return agentConfigOf(cluster)?.['cloud-provider-name'] === HARVESTER_CLOUD_PROVIDER && !!credential?.decodedData?.clusterId;
}
