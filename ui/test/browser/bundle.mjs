// Bundles entry.js (the Rancher page around the built extension) into out/host.js and out/host.css with esbuild:
// @rancher/shell's plugins, store and models from ui/node_modules, resolved as its build resolves them (@shell/…,
// @components/…), YAML loaded as objects; then compiles @rancher/shell's own stylesheet (assets/styles/app.scss,
// what Rancher's pages are styled with) into out/shell.css, its fonts and icons from the installed packages.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import * as sass from 'sass';
import yaml from 'js-yaml';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, '../../node_modules');
const shell = path.join(modules, '@rancher/shell');
const out = path.join(here, 'out');

const yamlPlugin = {
  name: 'yaml',
  setup(build) {
    build.onLoad({ filter: /\.ya?ml$/ }, (args) => ({ contents: JSON.stringify(yaml.load(fs.readFileSync(args.path, 'utf8'))), loader: 'json' }));
  },
};

// The host uses none of @rancher/shell's components (the extension brings its own); a model's lazy require of one
// (a resource's detail drawer) is left empty.
const noComponents = {
  name: 'no-components',
  setup(build) {
    build.onResolve({ filter: /\.vue$/ }, (args) => ({ path: args.path, namespace: 'stub' }));
    build.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export default {};', loader: 'js' }));
  },
};

fs.mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(here, 'entry.js')],
  bundle:      true,
  outfile:     path.join(out, 'host.js'),
  format:      'iife',
  alias:       { '@shell': shell, '~shell': shell, '@components': path.join(shell, 'rancher-components') },
  nodePaths:   [modules],
  plugins:     [yamlPlugin, noComponents],
  loader:      { '.svg': 'dataurl', '.png': 'dataurl', '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.eot': 'file' },
  define:      {
    'process.env.NODE_ENV': '"production"', 'process.env': '{}', __VUE_OPTIONS_API__: 'true', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
  },
  logLevel: 'error',
});

// ~@shell/… and ~shell/… are webpack's module paths; @rancher/icons' fonts are relative to its own stylesheet.
// A file URL for path p under dir, its query and fragment (the icon font's ?version) kept as they are.
const fileUrl = (dir, p) => {
  const [file, rest = ''] = p.split(/(?=[?#])/);

  return `${ pathToFileURL(path.join(dir, file)) }${ rest }`;
};
const css = sass.compile(path.join(shell, 'assets/styles/app.scss'), {
  loadPaths: [modules],
  importers: [{
    findFileUrl(url) {
      const m = url.match(/^~?(@shell|shell)\/(.*)$/);

      return m ? pathToFileURL(path.join(shell, m[2])) : null;
    },
  }],
  silenceDeprecations: ['import', 'global-builtin', 'color-functions', 'slash-div', 'mixed-decls', 'legacy-js-api', 'function-units'],
  logger:              sass.Logger.silent,
}).css.replace(/url\(["']?~@shell\/([^"')]+)["']?\)/g, (_, p) => `url("${ fileUrl(shell, p) }")`)
  .replace(/url\(["']?~?@rancher\/icons\/([^"')]+)["']?\)/g, (_, p) => `url("${ fileUrl(path.join(modules, '@rancher/icons'), p) }")`)
  .replace(/url\(["']?(\.\/)?fonts\/(icons[^"')]*)["']?\)/g, (_, _d, p) => `url("${ fileUrl(path.join(modules, '@rancher/icons/fonts'), p) }")`);

fs.writeFileSync(path.join(out, 'shell.css'), css);
