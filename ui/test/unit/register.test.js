import fs from 'fs';
import path from 'path';
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
    expect(Object.keys(p.registered).sort()).toEqual(['cloud-credential/hcivm', 'image/providers/hcivm.svg', 'l10n/en-us', 'machine-config/hcivm']);
    expect((await p.registered['machine-config/hcivm']()).default.name).toBe('HcivmMachineConfig');
    expect((await p.registered['cloud-credential/hcivm']()).default.name).toBe('HcivmCloudCredential');
    expect((await p.registered['l10n/en-us']()).default.hcivm.machineConfig.fields.cpuCount.label).toBe('CPUs');
    expect(p.metadata.name).toBe('hcivm');
  });

  // rancher/dashboard looks a node driver's icon up as the image providers/<driver>.svg (cluster form's addType,
  // cloudcredential.vue), and shows the extension's metadata.icon on the Extensions page.
  it('registers its icon for the driver tile and the Extensions page', () => {
    const p = fakePlugin();

    plugin(p);
    expect(p.registered['image/providers/hcivm.svg']).toBe('icon.svg');
    expect(p.metadata.icon).toBe('icon.svg');
    expect(p.metadata.version).toBe(pkg.version);
    const svg = fs.readFileSync(path.join(__dirname, '../../pkg/hcivm/icon.svg'), 'utf8');

    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 64 64"/);
    expect(svg).not.toMatch(/<script|href=|url\(/);
  });

  // The dashboard loads an extension only where its annotations hold, comparing them with node-semver
  // (rancher/dashboard shell/config/uiplugins.js shouldNotLoadPlugin: the Rancher version coerced, a -head build
  // read as x.y.999); 2.15.0 changed nothing the extension relies on (the forms' lookup, the icon's, the
  // extension API 3.x: @rancher/shell 3.0.12-rc.7).
  it('declares Rancher 2.12 to 2.15 and the extension API of the pinned @rancher/shell', () => {
    const a = pkg.rancher.annotations;

    for (const v of ['2.12.0', '2.13.1', '2.14.4', '2.15.0', '2.15.999']) {
      expect(semver.satisfies(v, a['catalog.cattle.io/rancher-version'])).toBe(true);
    }
    for (const v of ['2.11.9', '2.16.0']) {
      expect(semver.satisfies(v, a['catalog.cattle.io/rancher-version'])).toBe(false);
    }
    const shell = workspace.dependencies['@rancher/shell'];

    expect(shell).toMatch(/^3\.0\.\d+$/);
    expect(semver.satisfies(shell, a['catalog.cattle.io/ui-extensions-version'])).toBe(true);
    // The extension API of Rancher v2.12.12, v2.13.8, v2.14.4 and v2.15.0 (their shell/package.json, coerced).
    for (const v of ['3.0.5', '3.0.8', '3.0.9', '3.0.12']) {
      expect(semver.satisfies(v, a['catalog.cattle.io/ui-extensions-version'])).toBe(true);
    }
  });
});
