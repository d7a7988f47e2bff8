// The browser check's page without a build of the extension: Vue and the machine-config component bundled by
// esbuild (bundle.mjs), started in the fake Rancher of harness.js.
import * as Vue from 'vue';
import MachineConfig from '../../pkg/hcivm/machine-config/hcivm.vue';
import './harness';

window.Vue = Vue;
window.hcivmStart(MachineConfig);
