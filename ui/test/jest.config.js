// Jest for the extension in ui/pkg/hcivm (npm test, ui/scripts/test.sh): jsdom, .vue through @vue/vue3-jest, JS and
// TS through babel-jest, YAML (l10n, @rancher/shell's translations) as objects. @rancher/shell's components are the
// installed package's own (ui/node_modules/@rancher/shell), resolved as its build resolves them (@shell/…,
// @components/…: @rancher/shell vue.config.js aliases), and compiled like the extension's sources.
const shell = '<rootDir>/node_modules/@rancher/shell';

module.exports = {
  rootDir:                '..',
  roots:                  ['<rootDir>/test/unit'],
  testEnvironment:        'jsdom',
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons'] },
  setupFiles:             ['<rootDir>/test/rancher/jsdom.js'],
  moduleFileExtensions:   ['js', 'ts', 'json', 'vue', 'yaml', 'svg'],
  moduleNameMapper:       {
    // First: Jest takes the first pattern that matches.
    // The extension's icon is a file of its own (file-transform.js below: its name, as the build gives its URL);
    // the images and styles of @rancher/shell are nothing.
    '^\\./icon\\.svg$': '<rootDir>/pkg/hcivm/icon.svg',
    '\\.(css|scss|svg|png|jpe?g|gif|woff2?|eot|ttf)$': '<rootDir>/test/rancher/asset.js',
    '^@shell/(.*)$':      `${ shell }/$1`,
    '^~shell/(.*)$':      `${ shell }/$1`,
    '^@components/(.*)$': `${ shell }/rancher-components/$1`,
  },
  transform: {
    '^.+\\.vue$':    '@vue/vue3-jest',
    '^.+\\.[jt]s$':  '<rootDir>/test/babel-transform.js',
    '^.+\\.ya?ml$':  '<rootDir>/test/yaml-transform.js',
    '^.+\\.svg$':    '<rootDir>/test/file-transform.js',
  },
  // @rancher/shell ships sources (ES modules, .vue, .ts): compile them as the extension's own.
  transformIgnorePatterns: ['/node_modules/(?!(@rancher/shell|@rancher/components|vue-select|floating-vue|portal-vue|codemirror-editor-vue3)/)'],
  globals:                 { 'vue-jest': { experimentalCSSCompile: false, tsConfig: `${ __dirname }/tsconfig.json`, transform: { js: `${ __dirname }/babel-transform.js`, ts: `${ __dirname }/babel-transform.js` } } },
  // The first run compiles @rancher/shell's components the forms import; later runs read Jest's cache.
  testTimeout:             60000,
  cacheDirectory:                   `${ process.env.HOME }/.cache/docker-machine-driver-harvester/jest`,
};
