// Rancher's Harvester checks on the cluster page, which rke2.vue runs only for the driver named harvester
// (rancher/dashboard shell/edit/provisioning.cattle.io.cluster/rke2.vue, the same code in v2.12.12, v2.13.8, v2.14.4
// and v2.15.0), done here for hcivm:
// - setHarvesterVersionRange reads Harvester's harvester-csi-ccm-versions setting through Rancher's proxy, for a
//   credential of an imported Harvester, when the driver is harvester (isHarvesterDriver: $route.query.type);
// - isHarvesterIncompatible compares the harvester-cloud-provider and harvester-csi-driver charts that the chosen
//   Kubernetes version's release bundles (the release's charts, /v1-rke2-release/releases or
//   /v1-k3s-release/releases as fetchRke2Versions reads them) with the setting's ranges;
// - cloudProviderOptions disables Harvester, the driver's preferred cloud provider, for an incompatible version or
//   a credential of a pasted kubeconfig (isHarvesterExternalCredential reads harvestercredentialConfig, the built-in
//   driver's field, so never an hcivm credential's); setHarvesterDefaultCloudProvider chooses it on a new cluster
//   only when neither holds, and handleKubernetesChange takes it back when a new cluster's version becomes
//   incompatible.
// The page offers every cloud provider to a driver it has no preference for (shell/store/plugins.js
// driverToCloudProviderMap, which extensions cannot extend), so the form cannot disable the option: it refuses the
// choice instead (machine-config/hcivm.vue).
import semver from 'semver';
import { proxyUrl } from './harvester';

export const CSI_CCM_VERSIONS = 'harvester-csi-ccm-versions';
const CCM_CHART = 'harvester-cloud-provider';
const CSI_CHART = 'harvester-csi-driver';
const CSI_RANGE = 'harvester-csi-provider'; // the setting's key for the CSI driver's range (not the chart's name)

// versionRange reads the setting's ranges ({'harvester-cloud-provider': '>=…', 'harvester-csi-provider': '>=…'})
// from the Harvester cluster clusterId, as setHarvesterVersionRange does: its value, else its default; {} when it
// is not there. A value that is not JSON is {} too: Rancher's JSON.parse would throw there and leave the page's
// range as it was, which is {} for a page that never read one.
export async function versionRange(dispatch, clusterId) {
  const res = await dispatch('cluster/request', { url: `${ proxyUrl(clusterId) }/harvesterhci.io.settings` });
  const setting = (res?.data || []).find((s) => s.id === CSI_CCM_VERSIONS);

  if (!setting) {
    return {};
  }
  try {
    const range = JSON.parse(setting.value || setting.default || '{}');

    return range && typeof range === 'object' && !Array.isArray(range) ? range : {};
  } catch (e) {
    return {};
  }
}

// releaseCharts are the charts the Kubernetes version's release bundles ({name: {repo, version}}), from the release
// list the cluster page reads; {} for a version the list does not hold.
export async function releaseCharts(dispatch, kubernetesVersion) {
  if (!kubernetesVersion) {
    return {};
  }
  const url = kubernetesVersion.includes('k3s') ? '/v1-k3s-release/releases' : '/v1-rke2-release/releases';
  const res = await dispatch('management/request', { url });

  return (res?.data || []).find((r) => r.id === kubernetesVersion)?.charts || {};
}

// chartVersion is a chart's version as isHarvesterIncompatible reads it: a trailing "00" dropped (RKE2's chart
// 0.2.1000 is the upstream chart 0.2.10).
function chartVersion(charts, name) {
  const v = charts?.[name]?.version || '';

  return v.endsWith('00') ? v.slice(0, -2) : v;
}

// incompatible is isHarvesterIncompatible: both ranges set, and a chart outside its range (a chart the release
// does not bundle is outside too). Without both ranges nothing is compared.
export function incompatible(charts, range) {
  const ccm = range?.[CCM_CHART];
  const csi = range?.[CSI_RANGE];

  if (!ccm || !csi) {
    return false;
  }

  return !(semver.satisfies(chartVersion(charts, CCM_CHART), ccm) && semver.satisfies(chartVersion(charts, CSI_CHART), csi));
}
