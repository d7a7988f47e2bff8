// @rancher/shell's package build configuration (build-pkg.sh links the shell at .shell).
module.exports = require('./.shell/pkg/vue.config')(__dirname);
