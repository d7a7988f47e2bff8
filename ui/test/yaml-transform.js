// Jest transform for .yaml files: the object, as @rancher/shell's build loads them (js-yaml-loader).
const yaml = require('js-yaml');

module.exports = { process: (src) => ({ code: `module.exports = ${ JSON.stringify(yaml.load(src)) };` }) };
