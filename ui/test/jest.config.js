// Jest for the extension in ui/pkg/hcivm (npm test, ui/scripts/test.sh): jsdom, .vue through @vue/vue3-jest, JS and
// TS through babel-jest, YAML (l10n, @rancher/shell's translations) as objects. @rancher/shell's components are the
// installed package's own, resolved as its build resolves them (@shell/…, @components/…: @rancher/shell
// vue.config.js aliases), and compiled like the extension's sources.
//
// One project per Rancher line (SHELLS): every test runs on the shell the extension is built with (2.13's); the
// tests that run Rancher's own code — the cluster page (rke2.vue), the cloud-credential model and page, the
// extension loader — and the forms they drive run again on the published shells closest to the oldest and the
// newest line the extension supports, installed beside it under npm aliases (ui/package.json). The test's fake
// Rancher answers as that line does (globalThis.RANCHER_LINE: fixtures/rancher.js). The libraries a page shares
// with its extensions are one copy, the build's (SHARED), as Rancher hands its own to an extension.
const path = require('path');

const modules = path.join(__dirname, '../node_modules');

// The Rancher lines, their Rancher version and the installed @rancher/shell that stands for it (ui/package.json).
const SHELLS = [
  { line: '2.13', pkg: '@rancher/shell' }, // 3.0.8, the build's: rancher/dashboard v2.13.8 is 3.0.8-rc.8
  { line: '2.12', pkg: '@rancher/shell-2.12' }, // 3.0.5: v2.12.12 is 3.0.5-rc.6, 3.0.5 the published one closest to it
  { line: '2.15', pkg: '@rancher/shell-2.15' }, // 3.0.13: v2.15.0 is 3.0.12-rc.7, 3.0.12 is not published
];

// The tests that run Rancher's own code, run on every line.
const RANCHER_CODE = ['rke2', 'edit-save', 'versions', 'cloud-credential', 'loader'].map((t) => `<rootDir>/test/unit/${ t }.test.js`);

// One copy each of what Vue apps share (a second Vue would be a second reactivity system, a second vue-select or
// portal-vue a component the app never registered).
const SHARED = ['vue', 'vuex', 'vue-router', 'portal-vue', 'floating-vue', 'vue-select', 'codemirror-editor-vue3'];

// The packages shipped as ES modules or sources, which Jest must compile.
const ESM = [
  '@rancher/shell[^/]*', '@rancher/components', 'vue-select', 'floating-vue', 'portal-vue', 'codemirror-editor-vue3',
  'color', 'color-string', 'color-convert', 'color-name', 'vee-validate', '@vee-validate', 'clipboard-polyfill',
];

function project({ line, pkg }, first) {
  const shell = `<rootDir>/node_modules/${ pkg }`;

  return {
    displayName:            `rancher-${ line }`,
    rootDir:                path.join(__dirname, '..'),
    roots:                  ['<rootDir>/test/unit'],
    testMatch:              first ? ['**/*.test.js'] : RANCHER_CODE,
    testEnvironment:        'jsdom',
    testEnvironmentOptions: { customExportConditions: ['node', 'node-addons'] },
    setupFiles:             ['<rootDir>/test/rancher/jsdom.js', '<rootDir>/test/rancher/assets.js'],
    moduleFileExtensions:   ['js', 'mjs', 'ts', 'json', 'vue', 'yaml', 'svg'],
    moduleNameMapper:       {
      // First: Jest takes the first pattern that matches.
      // The extension's icon is a file of its own (file-transform.js below: its name, as the build gives its URL);
      // the images and styles of @rancher/shell are nothing.
      '^\\./icon\\.svg$': '<rootDir>/pkg/hcivm/icon.svg',
      '\\.(css|scss|svg|png|jpe?g|gif|woff2?|eot|ttf)$': '<rootDir>/test/rancher/asset.js',
      '^@shell/(.*)$':      `${ shell }/$1`,
      '^~shell/(.*)$':      `${ shell }/$1`,
      '^@components/(.*)$': `${ shell }/rancher-components/$1`,
      ...Object.fromEntries(SHARED.map((m) => [`^${ m }$`, require.resolve(m, { paths: [modules] })])),
    },
    transform: {
      '^.+\\.vue$':    '<rootDir>/test/vue-transform.js',
      '^.+\\.m?[jt]s$': '<rootDir>/test/babel-transform.js',
      '^.+\\.ya?ml$':  '<rootDir>/test/yaml-transform.js',
      '^.+\\.svg$':    '<rootDir>/test/file-transform.js',
    },
    // @rancher/shell ships sources (ES modules, .vue, .ts): compile them as the extension's own, and the ES modules
    // among their dependencies as rancher/dashboard's own jest.config.js does (the 2.15 line's color, vee-validate).
    transformIgnorePatterns: [`/node_modules/(?!(${ ESM.join('|') })/)`],
    globals:                 {
      RANCHER_LINE: line,
      'vue-jest':   {
        experimentalCSSCompile: false, tsConfig: `${ __dirname }/tsconfig.json`, transform: { js: `${ __dirname }/babel-transform.js`, ts: `${ __dirname }/babel-transform.js` }
      },
    },
    // The first run compiles @rancher/shell's components the forms import; later runs read Jest's cache.
    cacheDirectory: `${ process.env.HOME }/.cache/docker-machine-driver-harvester/jest`,
  };
}

// RANCHER_LINES=2.13 (or 2.12,2.15, …) runs only those lines' projects, for a quick loop; make ui-test runs all.
const lines = (process.env.RANCHER_LINES || '').split(',').map((l) => l.trim()).filter(Boolean);

module.exports = {
  projects:    SHELLS.map((s, i) => project(s, i === 0)).filter((p) => !lines.length || lines.includes(p.displayName.replace('rancher-', ''))),
  testTimeout: 60000,
};
