// babel-jest with this folder's Babel config, for .js/.ts files and the scripts of .vue files: the sources sit
// outside this folder, where Babel would not look for it.
module.exports = require('babel-jest').default.createTransformer({ configFile: `${ __dirname }/babel.config.js` });
