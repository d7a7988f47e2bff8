// Mounting the extension's forms as Rancher's pages mount them: in an app set up by test/rancher/host.js (the
// installed @rancher/shell's plugins, directives, fetch mixin and i18n store with the extension's l10n), the
// component taken from what the extension registered (its default export called as Rancher's plugin loader calls
// it), with the props Rancher's pages pass (MachinePool.vue for the machine config, edit/cloudcredential.vue for
// the credential).
import { enableAutoUnmount, mount } from '@vue/test-utils';
import { h, reactive } from 'vue';
import { PortalTarget } from 'portal-vue';
import extension from '../../pkg/hcivm/index';
import flagTable from '../../pkg/hcivm/flags.json';
import { installRancher, loadExtension, makeStore } from '../rancher/host';
import { credential as credentialModel } from '../rancher/api';
import * as rancher from '../fixtures/rancher';

export const registered = loadExtension(extension);

// Every page is taken down after its test, as a browser leaves a page.
enableAutoUnmount(afterEach);

// flush lets the page settle: promises, and the fetch mixin's 200 ms before it shows a fetched component
// (@rancher/shell mixins/fetch.client.js fetchDelay).
export const flush = async(n = 8) => {
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 0));
  }
  await new Promise((r) => setTimeout(r, 250));
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 0));
  }
};

// newConfig is a new HcivmConfig as Rancher makes it for a new pool: every field at its declared default (the
// machine-config CRD's defaults; booleans false), the credential's fields left out.
export function newConfig() {
  const v = {};

  for (const f of flagTable.flags) {
    if (!f.credential) {
      v[f.field] = f.kind === 'bool' ? false : f.declared;
    }
  }

  return v;
}

// settled waits until the component's fetch() has finished (the fetch mixin's $fetchState, shown after at least
// its 200 ms fetchDelay) and the page has rendered what it read: on a busy machine that takes a while.
export async function settled(wrapper) {
  const until = Date.now() + 20000;

  await flush();
  while (wrapper.vm.$fetchState?.pending && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await flush();
}

// mountWith mounts component with props beside the portal target the machine pool offers its config component
// for the pool's Advanced section (MachinePool.vue: <portal-target :name="'advanced-' + uuid" multiple>). wrapper
// is the component's; page the whole page's.
async function mountWith(component, props, fixtures) {
  const { store, calls } = await makeStore(registered, fixtures);
  const events = [];
  const page = mount({
    render: () => h('div', [
      h(component, { ...props, onValidationChanged: (v) => events.push(v) }),
      h('div', { class: 'advanced' }, [h(PortalTarget, { name: `advanced-${ props.uuid || 'none' }`, multiple: true })]),
    ]),
  }, {
    global: { plugins: [{ install: (app) => installRancher(app, store) }] },
  });

  const wrapper = page.findComponent(component);

  await settled(wrapper);

  return { wrapper, page, store, calls, events };
}

// Each pool's uuid names its Advanced section's portal (MachinePool.vue randomStr()); portal-vue's targets are
// global, so every mount has its own.
let mounts = 0;

// mountMachineConfig mounts the machine-config form for pool poolIndex of cluster, in mode, with the cluster's
// pools (each {pool, config}); the credential by id from credentials.
export async function mountMachineConfig({
  mode = 'create', cluster = rancher.newCluster(), pools, poolIndex = 0, config, credential = rancher.importedCredential(),
  credentials = [rancher.importedCredential(), rancher.externalCredential(), rancher.firstReleaseCredential()], harvester,
} = {}) {
  const value = reactive(config || newConfig());
  const machinePools = reactive(pools || [rancher.pool('pool1', 1, value, mode === 'create')]);

  machinePools[poolIndex].config = value;
  const component = (await registered['machine-config/hcivm']()).default;
  const mounted = await mountWith(component, {
    value, mode, cluster: reactive(cluster), credentialId: credential ? credential.id : '', uuid: `u${ ++mounts }`, poolIndex, machinePools,
    provider: 'hcivm', poolId: machinePools[poolIndex].id, poolCreateMode: machinePools[poolIndex].create, disabled: false, busy: false,
  }, { credentials, harvester });

  return { ...mounted, value, machinePools, cluster: mounted.wrapper.props('cluster') };
}

// mountCredential mounts the credential form in mode with the credential as Rancher's API returns it (a
// CloudCredential model), Rancher's clusters from clusters.
// kube is Harvester's Kubernetes API behind Rancher's proxy (test/rancher/kube.js).
export async function mountCredential({
  mode = 'create', data = rancher.newCredential(), clusters = rancher.managementClusters(), kube,
} = {}) {
  const component = (await registered['cloud-credential/hcivm']()).default;
  const { store } = await makeStore(registered, {});
  const value = credentialModel(data, { getters: store.getters, rootGetters: store.getters, dispatch: store.dispatch });
  const mounted = await mountWith(component, { value, mode, driverName: 'hcivm' }, { clusters, kube });

  return { ...mounted, value };
}

// text is what a user reads of a mounted form.
export const text = (wrapper) => wrapper.text().replace(/\s+/g, ' ');
