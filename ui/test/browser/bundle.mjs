// Bundles entry.js (the form on a fake store) into out/bundle.js with esbuild and vue-plugin.mjs, and harness.js
// alone into out/harness.js (for the built extension: run.mjs --built).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { vuePlugin } from './vue-plugin.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

await esbuild.build({
  entryPoints: [path.join(here, 'entry.js')],
  bundle:      true,
  outfile:     path.join(here, 'out/bundle.js'),
  format:      'iife',
  nodePaths:   [path.join(here, '../node_modules')],
  // One Vue, ui/test's, also when ui/node_modules (the build workspace's) has its own.
  alias:       { vue: path.join(here, '../node_modules/vue') },
  plugins:     [vuePlugin],
  define:      {
    'process.env.NODE_ENV': '"production"', __VUE_OPTIONS_API__: 'true', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
  },
  logLevel: 'warning',
});
await esbuild.build({
  entryPoints: [path.join(here, 'harness.js')],
  bundle:      true,
  outfile:     path.join(here, 'out/harness.js'),
  format:      'iife',
  logLevel:    'warning',
});
