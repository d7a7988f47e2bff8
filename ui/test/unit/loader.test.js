// The extension loaded by Rancher's own loader: the installed @rancher/shell's Plugin (core/plugin.ts, what
// core/plugins-loader.js hands an extension's default export), whose register keeps what the dashboard looks the
// driver's forms up by (type-map.js hasCustom → extension manager getDynamic(type, name): plugin.types[type][name])
// and its words (plugin.l10n, merged by store/i18n.js).
import { Plugin } from '@shell/core/plugin';
import extension from '../../pkg/hcivm/index';
import pkg from '../../pkg/hcivm/package.json';

describe('the extension, loaded by Rancher\'s Plugin', () => {
  it('registers its forms and icon under the driver name hcivm, and its words', async() => {
    const plugin = new Plugin(`hcivm-${ pkg.version }`);

    extension(plugin);
    expect(plugin.name).toBe('hcivm');
    expect(plugin.version).toBe(pkg.version);
    expect(Object.keys(plugin.types['machine-config'])).toEqual(['hcivm']);
    expect(Object.keys(plugin.types['cloud-credential'])).toEqual(['hcivm']);
    expect(plugin.types.image['providers/hcivm.svg']).toBe('icon.svg');
    expect((await plugin.types['machine-config'].hcivm()).default.name).toBe('HcivmMachineConfig');
    expect((await plugin.types['cloud-credential'].hcivm()).default.name).toBe('HcivmCloudCredential');
    expect(plugin.l10n['en-us']).toHaveLength(1);
    expect((await plugin.l10n['en-us'][0]()).default.hcivm.credential.cluster.label).toBe('Harvester Cluster');
  });
});
