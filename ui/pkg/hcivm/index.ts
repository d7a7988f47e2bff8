// The UI extension of driver hcivm: Rancher looks a node driver's forms up by the driver's name
// (rancher/dashboard shell/store/type-map.js hasCustom: getDynamic('machine-config' | 'cloud-credential', name)
// first, then the built-in folders).
import metadata from './package.json';
import { DRIVER, register } from './register';
import icon from './icon.svg';

// icon is the driver's (an original drawing; the chart's icon too, hack/helm-chart.sh). Rancher shows a node
// driver's icon on its tile in the cluster form and on its cloud-credential form, looked up as the image
// providers/<driver>.svg, extensions first (rancher/dashboard shell/edit/provisioning.cattle.io.cluster/index.vue
// addType, shell/edit/cloudcredential.vue; v2.12.12 to v2.15.0), else a generic one; the Extensions page shows
// the extension's metadata.icon (shell/pages/c/_cluster/uiplugins/index.vue, a UIPlugin without a catalog chart).
export default function(plugin: any): void {
  plugin.metadata = { ...metadata, icon };
  plugin.register('image', `providers/${ DRIVER }.svg`, icon);
  register(plugin);
}

export { DRIVER };
