// The Rancher around the extension in the tests (Jest and the browser check): a Vue app set up as Rancher's
// dashboard sets one up for an extension, from the installed @rancher/shell's own code, and a Vuex store whose
// Rancher API answers as Rancher's does (ui/test/fixtures/rancher, each file citing the code that shapes it).
//
// - plugins and directives: @rancher/shell initialize/install-plugins.js installPlugins (PortalVue, FloatingVue,
//   CodeMirror, the v-select component), initialize/install-directives.js installDirectives, plugins/i18n.js (the
//   `t` of every component, the v-t directive);
// - translations: @rancher/shell store/i18n.js, the real module, with the extension's l10n merged by its
//   mergeLoad action as its switchTo action merges every extension's registered l10n;
// - the fetch mixin (mixins/fetch.client.js, installed by initialize/entry.js) that runs fetch() and $fetchState;
// - the extension itself: its default export called with a plugin that records what it registers, as
//   core/plugin.ts register(type, name, fn) does.
import { createStore } from 'vuex';
import FloatingVue from 'floating-vue';
import PortalVue from 'portal-vue';
import vSelect from 'vue-select';
import { InstallCodeMirror } from 'codemirror-editor-vue3';
import i18n from '@shell/plugins/i18n';
import { floatingVueOptions } from '@shell/plugins/floating-vue';
import { installDirectives } from '@shell/initialize/install-directives';
import fetchMixin from '@shell/mixins/fetch.client';
import * as i18nStore from '@shell/store/i18n';
import { rancherApi } from './api';

// The preferences @rancher/shell's YamlEditor and CodeMirror read (store/prefs.js defaults).
const PREFS = {
  keymap: 'sublime', 'diff-mode': 'unified', theme: 'auto', 'hide-desc': [], 'show-pre-release': false,
};

// loadExtension calls the extension's default export as Rancher's plugin loader does and returns what it
// registered: { 'machine-config/hcivm': fn, 'cloud-credential/hcivm': fn, 'l10n/en-us': [fn…] }.
export function loadExtension(extension) {
  const registered = { l10n: {} };
  const plugin = {
    metadata: null,
    register(type, name, fn) {
      if (type === 'l10n') {
        (registered.l10n[name] = registered.l10n[name] || []).push(fn);
      } else {
        registered[`${ type }/${ name }`] = fn;
      }
    },
  };

  (extension.default || extension)(plugin);
  registered.metadata = plugin.metadata;

  return registered;
}

// makeStore is the dashboard's store as the forms use it: i18n (real), prefs, and the rancher, management and
// cluster stores answering from the fixtures (api.js). calls records every request.
export async function makeStore(registered, fixtures = {}) {
  const calls = [];
  const api = rancherApi(fixtures, calls);
  const store = createStore({
    modules: {
      i18n:       { namespaced: true, ...i18nStore, state: i18nStore.state },
      prefs:      { namespaced: true, getters: { get: () => (key) => PREFS[key] } },
      rancher:    api.rancher,
      management: api.management,
      cluster:    api.cluster,
    },
    getters: {
      currentStore:   () => () => 'cluster',
      clusterId:      () => 'local',
      productId:      () => 'manager',
      currentProduct: () => ({ inStore: 'management' }),
    },
  });

  api.bind(store);
  // The locale Rancher selects at start (store/i18n.js init → switchTo → setSelected), without which a translation
  // with a plural has no locale to format in.
  store.commit('i18n/setSelected', 'en-us');
  for (const fn of registered.l10n['en-us'] || []) {
    await store.dispatch('i18n/mergeLoad', { locale: 'en-us', module: fn });
  }

  return { store, calls };
}

// installRancher installs on app what @rancher/shell's entry installs for every page (initialize/entry.js: the
// fetch mixin that runs a component's fetch(), then install-plugins.js and install-directives.js).
export function installRancher(app, store) {
  app.use(store);
  app.mixin(fetchMixin);
  installDirectives(app);
  app.use(i18n, { store });
  app.use(PortalVue);
  app.use(FloatingVue, floatingVueOptions);
  app.use(InstallCodeMirror);
  app.component('v-select', vSelect);
}
