// Jest for the extension in ui/pkg/hcivm, run from ui/test (ui/scripts/test.sh): jsdom, .vue through
// @vue/vue3-jest, JS and TS through babel-jest; modules from this folder's node_modules.
module.exports = {
  rootDir:              '..',
  roots:                ['<rootDir>/test/unit'],
  testEnvironment:      require.resolve('jest-environment-jsdom'),
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons'] },
  modulePaths:          ['<rootDir>/test/node_modules'],
  // One Vue, this folder's, also when ui/node_modules (the build workspace's) has its own.
  moduleNameMapper:     { '^vue$': '<rootDir>/test/node_modules/vue' },
  moduleFileExtensions: ['js', 'ts', 'json', 'vue', 'svg'],
  transform:            {
    '^.+\\.vue$':   require.resolve('@vue/vue3-jest'),
    '^.+\\.[jt]s$': `${ __dirname }/babel-transform.js`,
    '^.+\\.svg$':   `${ __dirname }/file-transform.js`,
  },
  globals:        { 'vue-jest': { transform: { js: `${ __dirname }/babel-transform.js` } } },
  cacheDirectory: `${ process.env.HOME }/.cache/docker-machine-driver-harvester/jest`,
};
