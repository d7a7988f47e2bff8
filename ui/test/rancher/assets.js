// The 2.15 line's shell looks its images and JSON assets up through webpack's require.context
// (@rancher/shell utils/require-asset.ts), which its own tests replace (babel-plugin-transform-require-context;
// _setContexts, "allows injecting mock contexts"). Here: images are nothing, as every image the shells import
// (jest.config.js, asset.js); JSON assets are the shell's own files. The shells before have no such module.
const path = require('path');

let assets;

try {
  assets = require('@shell/utils/require-asset');
} catch (e) {}

if (assets?._setContexts) {
  const folder = path.dirname(require.resolve('@shell/assets/brand/suse/metadata.json'));
  const context = (answer) => Object.assign((key) => answer(key), { keys: () => [], resolve: (key) => key, id: 'assets' });

  assets._setContexts(context(() => ''), context((key) => require(path.join(folder, '../..', key))));
}
