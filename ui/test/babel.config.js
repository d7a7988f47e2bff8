// Babel for the extension's sources, @rancher/shell's and the tests', in Jest.
module.exports = {
  presets: [
    ['@babel/preset-env', { targets: { node: 'current' } }],
    // allExtensions: vue3-jest hands a lang="ts" component's compiled template to Babel as file.js.
    ['@babel/preset-typescript', { allExtensions: true }],
  ],
};
