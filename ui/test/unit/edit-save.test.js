// Opening an existing cluster and saving it replaces no machine: the cluster page of the installed @rancher/shell
// (edit/provisioning.cattle.io.cluster/rke2.vue) reads the pools with its own initMachinePools, the extension's form
// opens each saved pool as MachinePool.vue does (mode edit, poolCreateMode false), and the page's own
// saveMachinePools saves every pool's config, which feeds the pool's machine template (a changed config rolls the
// pool). Every config must reach the save byte for byte as Rancher's API returned it — pools made elsewhere
// (madeElsewhere: no clusterName, another namespace) included — unless the admin chooses what the form offers.
import Rke2 from '@shell/edit/provisioning.cattle.io.cluster/rke2.vue';
import * as rancher from '../fixtures/rancher';
import { makeStore } from '../rancher/host';
import { mountMachineConfig, registered } from './helpers';

// openPage reads the cluster's pools as the page does on edit (rke2.vue initMachinePools, with the page's data it
// reads), from a store that answers with configs.
async function openPage(cluster, configs) {
  const { store, calls } = await makeStore(registered, { configs });
  const page = {
    value:                     cluster,
    mode:                      'edit',
    lastIdx:                   0,
    machinePools:              [],
    initialMachinePoolsValues: {},
    isElementalCluster:        false,
    isUpstreamCAPIProvider:    false,
    provider:                  'hcivm',
    $store:                    store,
  };

  for (const m of ['initMachinePools', 'saveMachinePools', 'syncMachineConfigWithLatest']) {
    page[m] = Rke2.methods[m].bind(page);
  }
  await page.initMachinePools(cluster.spec.rkeConfig.machinePools);

  return { page, calls };
}

// openAndSave opens every pool in the form, lets act change what the admin changes, and saves the page.
async function openAndSave(configs, act = async() => {}) {
  const cluster = rancher.clusterMadeElsewhere();
  const { page, calls } = await openPage(cluster, configs);
  const forms = [];

  for (let i = 0; i < page.machinePools.length; i++) {
    forms.push(await mountMachineConfig({
      mode: 'edit', cluster, pools: page.machinePools, poolIndex: i, config: page.machinePools[i].config,
    }));
  }
  await act(forms);
  await page.saveMachinePools();

  return { saved: calls.filter((c) => c.action === 'save').map((c) => c.arg), forms, page };
}

describe('an existing cluster opened and saved', () => {
  it('saves every pool\'s config as Rancher returned it, pools made elsewhere included', async() => {
    const configs = rancher.configsMadeElsewhere();
    const { saved, page } = await openAndSave(configs);

    expect(page.machinePools.map((p) => p.create)).toEqual([false, false]);
    expect(saved.map((s) => s.id)).toEqual(configs.map((c) => c.id));
    saved.forEach((s, i) => expect(s.body).toBe(JSON.stringify(configs[i])));
  });

  it('says what a saved pool lacks and what setting it would replace, and writes nothing itself', async() => {
    const configs = rancher.configsMadeElsewhere();
    const { forms } = await openAndSave(configs);
    const [first, second] = forms.map((f) => f.page);

    expect(first.find('[data-offered="clusterName"]').text()).toContain('This pool was saved without a cluster name');
    expect(first.find('[data-offered="clusterName"]').text()).toContain('Rancher then replaces every machine of the pool.');
    expect(first.find('[data-offered="vmNamespace"]').exists()).toBe(false);
    expect(second.find('[data-offered="clusterName"]').text()).toContain('This pool was saved with the cluster name old-name, not mycluster');
    expect(second.find('[data-offered="vmNamespace"]').text()).toContain('This pool\'s machines are in namespace vms, not in the first pool\'s default');
    expect(first.find('[data-chosen]').exists()).toBe(false);
  });

  it('writes what the admin chooses, says that saving replaces the pool\'s machines, and takes it back on undo', async() => {
    const configs = rancher.configsMadeElsewhere();
    const { saved, forms } = await openAndSave(configs, async([, second]) => {
      await second.page.find('[data-offered="vmNamespace"] button').trigger('click');
      expect(second.page.find('[data-chosen="vmNamespace"]').text()).toContain('The namespace is changed: saving replaces every machine of this pool');
      await second.page.find('[data-offered="clusterName"] button').trigger('click');
      await second.page.find('[data-chosen="clusterName"] button').trigger('click');
    });

    expect(forms[1].page.find('[data-offered="clusterName"]').exists()).toBe(true);
    expect(saved[0].body).toBe(JSON.stringify(configs[0]));
    expect(JSON.parse(saved[1].body)).toEqual({ ...configs[1], vmNamespace: 'default' });
  });

  it('keeps pool 0\'s namespace as Rancher\'s Harvester form does once the pool is saved, and every later pool\'s', async() => {
    const { forms } = await openAndSave(rancher.configsMadeElsewhere());

    for (const f of forms) {
      expect(f.wrapper.vm.namespaceDisabled).toBe(true);
    }
  });
});
