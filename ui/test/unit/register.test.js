import semver from 'semver';
import plugin from '../../pkg/hcivm/index';
import pkg from '../../pkg/hcivm/package.json';
import workspace from '../../package.json';

function fakePlugin() {
  const registered = {};

  return {
    registered,
    register(type, name, fn) {
      registered[`${ type }/${ name }`] = fn;
    },
  };
}

describe('the extension', () => {
  it('registers its forms under the driver name hcivm, and its words', async() => {
    const p = fakePlugin();

    plugin(p);
    expect(Object.keys(p.registered).sort()).toEqual(['cloud-credential/hcivm', 'l10n/en-us', 'machine-config/hcivm']);
    expect((await p.registered['machine-config/hcivm']()).default.name).toBe('HcivmMachineConfig');
    expect((await p.registered['cloud-credential/hcivm']()).default.name).toBe('HcivmCloudCredential');
    expect((await p.registered['l10n/en-us']()).default.hcivm.machineConfig.fields.cpuCount.label).toBe('CPUs');
    expect(p.metadata.name).toBe('hcivm');
  });

  it('declares Rancher 2.12 to 2.14 and the extension API of the pinned @rancher/shell', () => {
    const a = pkg.rancher.annotations;

    for (const v of ['2.12.0', '2.13.1', '2.14.4']) {
      expect(semver.satisfies(v, a['catalog.cattle.io/rancher-version'])).toBe(true);
    }
    for (const v of ['2.11.9', '2.15.0']) {
      expect(semver.satisfies(v, a['catalog.cattle.io/rancher-version'])).toBe(false);
    }
    const shell = workspace.dependencies['@rancher/shell'];

    expect(shell).toMatch(/^3\.0\.\d+$/);
    expect(semver.satisfies(shell, a['catalog.cattle.io/ui-extensions-version'])).toBe(true);
  });
});
