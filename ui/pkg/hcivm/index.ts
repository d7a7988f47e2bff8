// The UI extension of driver hcivm: Rancher looks a node driver's forms up by the driver's name
// (rancher/dashboard shell/store/type-map.js hasCustom: getDynamic('machine-config' | 'cloud-credential', name)
// first, then the built-in folders).
import metadata from './package.json';
import { DRIVER, register } from './register';

export default function(plugin: any): void {
  plugin.metadata = metadata;
  register(plugin);
}

export { DRIVER };
