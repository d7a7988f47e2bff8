// Jest's stand-in for the asset modules of @rancher/shell's webpack build, which make an image the extension
// requires into the URL of the emitted file: here the module is the file's name.
const path = require('path');

module.exports = {
  process(_source, filename) {
    return { code: `module.exports = ${ JSON.stringify(path.basename(filename)) };` };
  },
};
