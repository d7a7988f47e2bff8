// The Rancher page around the built extension in the browser check (bundled by bundle.mjs): Vue and js-yaml as
// globals, as Rancher provides them to an extension's UMD (the build's externals: @rancher/shell
// pkg/vue.config.js; Vue by vue-cli's library target), and window.hcivmStart, which mounts a form the extension
// registered in an app set up as Rancher's (test/rancher/host.js) with fixtures of Rancher's answers.
import * as Vue from 'vue';
import jsyaml from 'js-yaml';
import { PortalTarget } from 'portal-vue';
import flagTable from '../../pkg/hcivm/flags.json';
import { installRancher, loadExtension, makeStore } from '../rancher/host';
import { credential as credentialModel } from '../rancher/api';
import * as rancher from '../fixtures/rancher';

window.Vue = Vue;
window.__jsyaml = jsyaml;
// CodeMirror for YamlEditor, loaded as Rancher loads it (@shell/plugins/codemirror-loader.js).
window.__codeMirrorLoader = () => import('@shell/plugins/codemirror');

function newConfig() {
  const v = {};

  for (const f of flagTable.flags) {
    if (!f.credential) {
      v[f.field] = f.kind === 'bool' ? false : f.declared;
    }
  }

  return v;
}

// hcivmStart(extension, form): form 'machine-config' (a new pool of a new cluster, its Advanced section open) or
// 'cloud-credential' (a new credential). window.hcivm exposes the value the form writes.
window.hcivmStart = async(extension, form) => {
  const registered = loadExtension(extension);
  const { store } = await makeStore(registered, {
    credentials: [rancher.importedCredential()], clusters: rancher.managementClusters(),
  });
  const component = (await registered[`${ form }/hcivm`]()).default;
  let root;

  if (form === 'machine-config') {
    const value = Vue.reactive(newConfig());
    const cluster = Vue.reactive(rancher.newCluster('mycluster'));
    const pools = Vue.reactive([rancher.pool('pool1', 3, value, true)]);
    const valid = [];

    window.hcivm = { value, cluster, valid };
    root = () => Vue.h('div', { class: 'hcivm-page' }, [
      Vue.h('h2', 'Machine Pools: pool1'),
      Vue.h(component, {
        value, mode: 'create', cluster, credentialId: rancher.importedCredential().id, uuid: 'pool1', poolIndex: 0, machinePools: pools,
        provider: 'hcivm', poolId: 'pool-pool1', poolCreateMode: true, onValidationChanged: (v) => valid.push(v),
      }),
      Vue.h('hr'),
      Vue.h('h2', 'Advanced'),
      Vue.h('div', { class: 'advanced' }, [Vue.h(PortalTarget, { name: 'advanced-pool1', multiple: true })]),
    ]);
  } else {
    const value = credentialModel(rancher.newCredential(), { getters: store.getters, rootGetters: store.getters, dispatch: store.dispatch });
    const valid = [];

    window.hcivm = { value, valid };
    // form is the component, whose test() the credential page awaits before it saves (cloudcredential.vue).
    root = () => Vue.h('div', { class: 'hcivm-page' }, [
      Vue.h('h2', 'Cloud Credential: Hcivm'),
      Vue.h(component, {
        value, mode: 'create', driverName: 'hcivm', onValidationChanged: (v) => valid.push(v), ref: (c) => {
          window.hcivm.form = c;
        },
      }),
    ]);
  }
  const app = Vue.createApp({ render: root });

  installRancher(app, store);
  app.mount('#app');
};
