// The build workspace's configuration: @rancher/shell's (build-pkg.sh builds pkg/hcivm with it).
module.exports = require('@rancher/shell/vue.config')(__dirname, { excludes: [] });
