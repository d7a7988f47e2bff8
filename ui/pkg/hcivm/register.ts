// register adds the forms and the words of driver hcivm to a plugin (rancher/dashboard shell/core/plugin.ts
// register(type, name, fn)); the functions load them when Rancher first needs them. It registers what
// @rancher/shell's importTypes would find in the folders machine-config/, cloud-credential/ and l10n/
// (shell/pkg/auto-import.js), by hand so that a test can call it.
export const DRIVER = 'hcivm';

export function register(plugin: { register: (type: string, name: string, fn: () => Promise<unknown>) => void }): void {
  plugin.register('machine-config', DRIVER, () => import('./machine-config/hcivm.vue'));
  plugin.register('cloud-credential', DRIVER, () => import('./cloud-credential/hcivm.vue'));
  plugin.register('l10n', 'en-us', () => import('./l10n/en-us.yaml'));
}
