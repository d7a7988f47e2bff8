// Rancher's own Harvester cloud-provider setup, run for an hcivm cluster: the cluster page's before-save hook
// setHarvesterChartValues and applyChartValues, taken from the installed @rancher/shell's
// edit/provisioning.cattle.io.cluster/rke2.vue (the same code in rancher/dashboard v2.12.12 to v2.15.0), called on
// the cluster this extension's form has filled, with the credential as Rancher's API returns it. The test shows
// the cluster object the page would save.
import Rke2 from '@shell/edit/provisioning.cattle.io.cluster/rke2.vue';
import * as rancher from '../fixtures/rancher';
import { mountMachineConfig } from './helpers';
import { agentConfigOf } from '../../pkg/hcivm/lib/cluster';

// savePage runs the page's hooks on cluster as rke2.vue's save does (saveOverride: the before-save hooks, then
// applyChartValues into spec.rkeConfig), with this: the page's data and computed values those methods read.
async function savePage({ cluster, credential, machinePools, store }) {
  const page = {
    value:          cluster,
    agentConfig:    agentConfigOf(cluster),
    credential,
    machinePools,
    isCreate:       true,
    isEdit:         false,
    liveValue:      null,
    userChartValues: {},
    addonNames:     [],
    rke2Charts:     ['harvester-cloud-provider'],
    addonVersions:  [],
    errors:         [],
    $store:         store,
    t:              (key) => key,
  };

  for (const m of ['setHarvesterChartValues', 'createKubeconfigSecret', 'chartVersionKey', 'applyChartValues']) {
    page[m] = Rke2.methods[m].bind(page);
  }
  await page.setHarvesterChartValues();
  page.applyChartValues(cluster.spec.rkeConfig);

  return page;
}

describe('a new hcivm cluster with the Harvester cloud provider', () => {
  it('is saved with the cloud provider\'s config and global.cattle.clusterName, as on the built-in route', async() => {
    const { cluster, machinePools, store, calls } = await mountMachineConfig({ cluster: rancher.newCluster('mycluster') });
    const credential = await store.dispatch('rancher/find', { type: 'cloudcredential', id: rancher.importedCredential().id });

    await savePage({ cluster, credential, machinePools, store });
    expect(cluster.spec.rkeConfig.machineSelectorConfig[0].config).toEqual({
      'cloud-provider-name':   'harvester',
      'cloud-provider-config': 'secret://fleet-default:harvesterconfigabcde',
    });
    expect(cluster.spec.rkeConfig.chartValues).toEqual({
      'harvester-cloud-provider': {
        global:          { cattle: { clusterName: 'mycluster' } },
        cloudConfigPath: '/var/lib/rancher/rke2/etc/config-files/cloud-provider-config',
      },
    });
    expect(machinePools[0].config.clusterName).toBe('mycluster');
    // Harvester made the cluster's service account in the pool's namespace.
    expect(calls.find((c) => c.action === 'management/request' && c.arg.method === 'POST').arg).toMatchObject({
      url:  `/k8s/clusters/${ rancher.HARVESTER_ID }/v1/harvester/kubeconfig`,
      data: { serviceAccountName: 'mycluster', namespace: 'default' },
    });
  });

  it('gets neither with a credential that has no clusterId (the type before it had one)', async() => {
    const { cluster, machinePools, store } = await mountMachineConfig({ cluster: rancher.newCluster('mycluster'), credential: rancher.firstReleaseCredential() });
    const credential = await store.dispatch('rancher/find', { type: 'cloudcredential', id: rancher.firstReleaseCredential().id });

    agentConfigOf(cluster)['cloud-provider-name'] = 'harvester';
    await savePage({ cluster, credential, machinePools, store });
    expect(cluster.spec.rkeConfig.chartValues).toEqual({});
    expect(agentConfigOf(cluster)['cloud-provider-config']).toBeUndefined();
  });
});
