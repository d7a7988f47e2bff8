// @vue/vue3-jest with TypeScript registered for @vue/compiler-sfc, as vue-loader registers it (vue's own
// compiler-sfc/register-ts.js): a <script setup lang="ts"> component whose props are an imported type (rancher/
// dashboard's rancher-components since the 2.15 line, e.g. RcSeparator.vue) needs it to read the type's file.
require('@vue/compiler-sfc').registerTS(() => require('typescript'));

module.exports = require('@vue/vue3-jest');
