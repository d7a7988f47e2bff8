// Rancher's Harvester checks on the cluster page run for hcivm: the extension's functions agree with Rancher's own,
// taken from the installed @rancher/shell's edit/provisioning.cattle.io.cluster/rke2.vue (isHarvesterIncompatible,
// setHarvesterVersionRange, setHarvesterDefaultCloudProvider, cloudProviderOptions, run with the page's data they
// read as they would for the driver named harvester), and the machine-config form makes the same choices.
import Rke2 from '@shell/edit/provisioning.cattle.io.cluster/rke2.vue';
import {
  chooseCloudProvider, cloudProviderProblem, versionChanged
} from '../../pkg/hcivm/lib/cluster';
import { incompatible, releaseCharts, versionRange } from '../../pkg/hcivm/lib/versions';
import * as rancher from '../fixtures/rancher';
import harvester from '../fixtures/harvester.json';
import { makeStore } from '../rancher/host';
import { mountMachineConfig, registered } from './helpers';
import { choose, YamlEditor } from './controls';

const RANGES = [
  {},
  { 'harvester-cloud-provider': '>=0.0.1 <0.3.0' },
  { 'harvester-cloud-provider': '>=0.0.1 <0.3.0', 'harvester-csi-provider': '>=0.0.1 <0.3.0' },
  { 'harvester-cloud-provider': '>=0.2.11', 'harvester-csi-provider': '>=0.1.25 <0.2.0' },
];
const CHARTS = [
  {},
  ...rancher.releases('rke2', 'v2.15.0').map((r) => r.charts),
  { 'harvester-cloud-provider': { version: '0.2.1000' } },
  { 'harvester-cloud-provider': { version: '0.2.300' }, 'harvester-csi-driver': { version: '0.1.1600' } },
];
const agentOf = (cluster) => cluster.spec.rkeConfig.machineSelectorConfig[0].config;

describe('the Kubernetes version against Harvester\'s cloud provider and CSI charts', () => {
  it('is incompatible exactly where Rancher\'s isHarvesterIncompatible says so', () => {
    let incompatibleSeen = 0;

    for (const range of RANGES) {
      for (const charts of CHARTS) {
        const rancherSays = Rke2.computed.isHarvesterIncompatible.call({ chartVersions: charts, harvesterVersionRange: range });

        expect([range, charts, incompatible(charts, range)]).toEqual([range, charts, rancherSays]);
        incompatibleSeen += rancherSays ? 1 : 0;
      }
    }
    expect(incompatibleSeen).toBeGreaterThan(3);
  });

  it('reads Harvester\'s ranges as setHarvesterVersionRange does, and the version\'s charts as the page does', async() => {
    const { store, calls } = await makeStore(registered, {});
    const page = {
      credential: { decodedData: { clusterId: rancher.HARVESTER_ID, clusterType: 'imported' } }, harvesterVersionRange: null, $store: store, setHarvesterDefaultCloudProvider() {},
    };

    await Rke2.methods.setHarvesterVersionRange.call(page);
    expect(await versionRange(store.dispatch, rancher.HARVESTER_ID)).toEqual(page.harvesterVersionRange);
    expect(page.harvesterVersionRange).toEqual({ 'harvester-cloud-provider': '>=0.0.1 <0.3.0', 'harvester-csi-provider': '>=0.0.1 <0.3.0' });
    const urls = calls.filter((c) => c.action === 'cluster/request').map((c) => c.arg.url);

    expect(urls[0]).toBe(urls[1]);
    const releases = (await store.dispatch('management/request', { url: '/v1-rke2-release/releases' })).data;

    for (const r of releases) {
      expect(await releaseCharts(store.dispatch, r.id)).toEqual(r.charts);
    }
    expect(await releaseCharts(store.dispatch, 'v1.99.0+rke2r1')).toEqual({});
  });

  it('is {} when Harvester has no such setting, or one that is not JSON', async() => {
    for (const settings of [{ data: [] }, { data: [{ id: 'harvester-csi-ccm-versions', value: '{not json', default: '' }] }]) {
      const { store } = await makeStore(registered, { harvester: { ...harvester.responses, '/harvesterhci.io.settings': settings } });

      expect(await versionRange(store.dispatch, rancher.HARVESTER_ID)).toEqual({});
    }
  });
});

describe('the cloud provider chosen for a new cluster', () => {
  const credential = (external) => (external ? rancher.externalCredential() : rancher.importedCredential());
  // Rancher's choice for its own driver: setHarvesterDefaultCloudProvider with isHarvesterDriver, as
  // setHarvesterVersionRange runs it when the credential is chosen.
  const rancherChooses = (mode, chosen, external, incompat) => {
    const page = {
      isHarvesterDriver: true, mode, agentConfig: { 'cloud-provider-name': chosen }, isHarvesterExternalCredential: external, isHarvesterIncompatible: incompat,
    };

    Rke2.methods.setHarvesterDefaultCloudProvider.call(page);

    return page.agentConfig['cloud-provider-name'];
  };

  it('is Rancher\'s choice for its own driver: Harvester when nothing speaks against it, taken back where it would be disabled', () => {
    for (const chosen of ['', 'harvester']) {
      for (const external of [false, true]) {
        for (const incompat of [false, true]) {
          const cluster = rancher.newCluster();
          const refused = external || incompat;

          agentOf(cluster)['cloud-provider-name'] = chosen;
          chooseCloudProvider(cluster, { decodedData: { ...credential(external).hcivmcredentialConfig } }, 'create', incompat);
          // Rancher clears a choice made before the credential, Harvester too; the form keeps Harvester where
          // nothing speaks against it.
          const want = chosen && !refused ? 'harvester' : rancherChooses('create', chosen, external, incompat);

          expect([chosen, external, incompat, agentOf(cluster)['cloud-provider-name']]).toEqual([chosen, external, incompat, want]);
        }
      }
    }
  });

  it('leaves another choice, which Rancher would clear, and the cluster being edited', () => {
    const cluster = rancher.newCluster();

    agentOf(cluster)['cloud-provider-name'] = 'external';
    expect(chooseCloudProvider(cluster, { decodedData: { clusterType: 'external' } }, 'create', true)).toBe(false);
    expect(agentOf(cluster)['cloud-provider-name']).toBe('external');
    agentOf(cluster)['cloud-provider-name'] = 'harvester';
    expect(chooseCloudProvider(cluster, { decodedData: { clusterType: 'external' } }, 'edit', true)).toBe(false);
    expect(versionChanged(cluster, 'edit', true)).toBe(false);
    expect(versionChanged(cluster, 'create', false)).toBe(false);
    expect(versionChanged(cluster, 'create', true)).toBe(true);
    expect(agentOf(cluster)['cloud-provider-name']).toBe('');
  });

  it('is refused where Rancher\'s page does not offer Harvester to its own driver (a pool without its own cloud provider kubeconfig)', () => {
    const options = (external, incompat) => Rke2.computed.cloudProviderOptions.call({
      agentArgs:                     { 'cloud-provider-name': { options: ['aws', 'harvester', 'external'] } },
      agentConfig:                   {},
      value:                         { spec: { kubernetesVersion: 'v1.33.5+rke2r1' } },
      provider:                      'harvester',
      canAzureMigrateOnEdit:         false,
      isHarvesterExternalCredential: external,
      isHarvesterIncompatible:       incompat,
      $store:                        { getters: { 'plugins/cloudProviderForDriver': () => 'harvester', 'i18n/t': (k) => k, 'i18n/withFallback': (k, a, f) => f } },
    });

    for (const external of [false, true]) {
      for (const incompat of [false, true]) {
        const cluster = rancher.newCluster();

        agentOf(cluster)['cloud-provider-name'] = 'harvester';
        const disabled = options(external, incompat).find((o) => o.value === 'harvester').disabled;

        expect(!!cloudProviderProblem(cluster, { decodedData: { ...credential(external).hcivmcredentialConfig } }, {}, incompat)).toBe(disabled);
        // The driver's own cloud provider kubeconfig makes Harvester work with a pasted kubeconfig (cloud-provider.md).
        expect(!!cloudProviderProblem(cluster, { decodedData: { ...credential(external).hcivmcredentialConfig } }, { generateCloudProviderConfig: true }, incompat)).toBe(incompat);
      }
    }
  });
});

describe('the machine-config form\'s cloud-provider checks', () => {
  it('does not choose Harvester for a version Harvester does not support, and refuses it when chosen', async() => {
    const cluster = rancher.newCluster();

    cluster.spec.kubernetesVersion = 'v1.34.2+rke2r1';
    const { wrapper, page } = await mountMachineConfig({ cluster });

    expect(agentOf(wrapper.props('cluster'))['cloud-provider-name']).toBeUndefined();
    expect(page.find('[data-finding="cloudProvider"]').exists()).toBe(false);
    agentOf(wrapper.props('cluster'))['cloud-provider-name'] = 'harvester';
    await new Promise((r) => setTimeout(r, 0));
    const message = 'Harvester cannot be this cluster\'s cloud provider: Harvester\'s harvester-csi-ccm-versions setting does not support the harvester-cloud-provider and harvester-csi-driver charts of Kubernetes v1.34.2+rke2r1.';

    expect(page.find('[data-finding="cloudProvider"]').text()).toContain(message);
    expect(wrapper.vm.test().errors[0]).toContain(message);
  });

  it('takes Harvester back when a new cluster\'s version changes to one Harvester does not support', async() => {
    const { wrapper } = await mountMachineConfig();
    const cluster = wrapper.props('cluster');

    expect(agentOf(cluster)['cloud-provider-name']).toBe('harvester');
    cluster.spec.kubernetesVersion = 'v1.34.2+rke2r1';
    for (let i = 0; i < 20 && agentOf(cluster)['cloud-provider-name']; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(agentOf(cluster)['cloud-provider-name']).toBe('');
    cluster.spec.kubernetesVersion = 'v1.33.5+rke2r1';
    await new Promise((r) => setTimeout(r, 20));
    expect(agentOf(cluster)['cloud-provider-name']).toBe('');
  });

  it('refuses Harvester for a pasted kubeconfig unless the pool gets the cloud provider\'s kubeconfig from the driver', async() => {
    const cluster = rancher.newCluster();

    agentOf(cluster)['cloud-provider-name'] = 'harvester';
    const { wrapper, page } = await mountMachineConfig({ cluster, credential: rancher.externalCredential() });

    expect(agentOf(wrapper.props('cluster'))['cloud-provider-name']).toBe('');
    agentOf(wrapper.props('cluster'))['cloud-provider-name'] = 'harvester';
    await new Promise((r) => setTimeout(r, 0));
    expect(wrapper.vm.test().errors[0]).toBe('Harvester cannot be this cluster\'s cloud provider with this pool\'s options: the credential holds a pasted kubeconfig, for which Rancher does not set the cloud provider up. Choose another cloud provider in the cluster\'s basics, or have the driver make the cloud provider\'s kubeconfig (Advanced, Guest Cloud Provider).');
    await choose(page, 'generateCloudProviderConfig', true);
    expect(page.find('[data-finding="cloudProvider"]').exists()).toBe(false);
    expect(YamlEditor).toBeDefined();
  });

  it('warns, without refusing, on a cluster Rancher already runs', async() => {
    const cluster = rancher.clusterForEdit();

    cluster.spec.kubernetesVersion = 'v1.34.2+rke2r1';
    const { wrapper, page } = await mountMachineConfig({ mode: 'edit', cluster, config: rancher.savedConfig() });

    expect(page.find('[data-finding="cloudProvider"]').classes()).toContain('warning');
    expect(wrapper.vm.test()).toBe(true);
  });
});
