// register adds the forms of driver hcivm to a plugin (rancher/dashboard shell/core/plugin.ts register(type,
// name, fn)); the functions load them when Rancher first shows them.
export const DRIVER = 'hcivm';

export function register(plugin: { register: (type: string, name: string, fn: () => Promise<unknown>) => void }): void {
  plugin.register('machine-config', DRIVER, () => import('./machine-config/hcivm.vue'));
  plugin.register('cloud-credential', DRIVER, () => import('./cloud-credential/hcivm.vue'));
}
