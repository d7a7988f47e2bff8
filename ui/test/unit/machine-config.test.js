import fs from 'fs';
import path from 'path';
import { RESOURCES } from '../../pkg/hcivm/lib/harvester';
import * as rancher from '../fixtures/rancher';
import harvester from '../fixtures/harvester.json';
import { flush, mountMachineConfig, newConfig, text } from './helpers';
import {
  Checkbox, choose, control, LabeledSelect, optionsOf, YamlEditor
} from './controls';

const FIXTURE = path.join(__dirname, '../fixtures/hcivmconfig.json');
const PREFIX = `/k8s/clusters/${ rancher.HARVESTER_ID }/v1`;
const requested = (calls) => calls.filter((c) => c.action === 'cluster/request').map((c) => c.arg.url).sort();
const values = (page, field, opts) => optionsOf(page, field, opts).map((o) => o.value);
const messages = (wrapper) => (wrapper.vm.test().errors || []);

describe('the machine-config form, creating a cluster', () => {
  it('reads the credential, then Harvester through Rancher\'s proxy for the credential\'s cluster', async() => {
    const { calls } = await mountMachineConfig();

    expect(calls[0]).toEqual({ action: 'rancher/find', arg: { type: 'cloudcredential', id: 'cattle-global-data:cc-hcivm1' } });
    expect(requested(calls)).toEqual([
      ...Object.values(RESOURCES).map((r) => `${ PREFIX }/${ r }`),
      `${ PREFIX }/harvesterhci.io.settings`, // the ranges of the cloud provider's and CSI driver's charts
      `${ PREFIX }/harvester/cluster/local`,
      `${ PREFIX }/harvester/cluster/local?link=deviceCapacity`,
    ].sort());
  });

  it('offers what Rancher\'s Harvester form offers: ready images newest first, user namespaces, no storage network', async() => {
    const { page } = await mountMachineConfig();

    expect(values(page, 'diskInfo', { col: 'imageName', within: page.find('[data-disk="0"]') })).toEqual(['default/noble', 'default/ubuntu']);
    expect(values(page, 'vmNamespace')).toEqual(['default', 'vms']);
    expect(optionsOf(page, 'networkInfo', { col: 'networkName', within: page.find('[data-nic="0"]') }).map((o) => o.label)).toEqual(['default/vlan1 (VLAN 1)']);
    expect(optionsOf(page, 'cpuModel').map((o) => o.label)).toEqual([
      'Default', 'host-model', 'host-passthrough', 'Cascadelake-Server (2 hosts ready)', 'IvyBridge (1 host ready)',
    ]);
    expect(values(page, 'sshKeypairs')).toEqual(['default/alice', 'default/bob']);
    expect(values(page, 'zone')).toEqual(['zone-a', 'zone-b']);
  });

  it('adds a blank volume of the default storage class, offering no storage class that backs an image', async() => {
    const { page, value } = await mountMachineConfig();

    await page.find('[data-add="volume"]').trigger('click');
    expect(JSON.parse(value.diskInfo).disks[1]).toEqual({ size: 10, storageClassName: 'longhorn' });
    expect(values(page, 'diskInfo', { col: 'storageClassName', within: page.find('[data-disk="1"]') })).toEqual(['longhorn', 'fast']);
  });

  it('starts user data and network data from Harvester\'s cloud-init templates', async() => {
    const { page, value } = await mountMachineConfig();
    const user = harvester.responses['/configmaps'].data[0].data.cloudInit;

    expect(optionsOf(page, 'userData')).toEqual([{ value: user, label: 'default/user-data-ubuntu' }]);
    expect(optionsOf(page, 'networkData').map((o) => o.label)).toEqual(['default/network-data-static']);
    await choose(page, 'userData', user);
    expect(value.userData).toBe(user);
    expect(control(page, 'userData', { kind: YamlEditor }).props('value')).toBe(user);
  });

  it('offers CPU pinning only when a Harvester host runs the CPU manager', async() => {
    const withManager = await mountMachineConfig();

    expect(control(withManager.page, 'cpuPinning', { kind: Checkbox }).props('disabled')).toBe(false);
    const responses = JSON.parse(JSON.stringify(harvester.responses));

    delete responses['/nodes'].data[0].metadata.labels.cpumanager;
    const without = await mountMachineConfig({ harvester: responses });

    expect(without.wrapper.vm.choices.cpuManager).toBe(false);
    expect(control(without.page, 'cpuPinning', { kind: Checkbox }).props('disabled')).toBe(true);
    expect(text(without.page)).toContain('No Harvester host runs the CPU manager');
  });

  it('takes a USB device as well as PCI devices, and any device name typed in', async() => {
    const { page, value } = await mountMachineConfig();

    await page.find('[data-add="hostDevices"]').trigger('click');
    const row = page.find('[data-list="hostDevices"] .hcivm-device-row');

    expect(optionsOf(page, 'hostDeviceInfo', { within: row, col: 'deviceName' })).toEqual([
      { value: 'kubevirt.io/h2-001002', label: 'kubevirt.io/h2-001002 (USB) (1 free)' },
      { value: 'nvidia.com/GA102GL_A10', label: 'nvidia.com/GA102GL_A10 (PCI) (1 free)' },
    ]);
    expect(control(page, 'hostDeviceInfo', { within: row, col: 'deviceName', kind: LabeledSelect }).vm.$attrs.taggable).toBe(true);
    await choose(page, 'hostDeviceInfo', 'token', { within: row, col: 'name' });
    await choose(page, 'hostDeviceInfo', 'kubevirt.io/h2-001002', { within: row, col: 'deviceName' });
    expect(JSON.parse(value.hostDeviceInfo)).toEqual({ hostDevices: [{ name: 'token', deviceName: 'kubevirt.io/h2-001002' }] });
  });

  it('offers no control for a field that cannot work inside Rancher', async() => {
    const { page } = await mountMachineConfig();

    for (const f of ['sshPrivateKeyPath', 'keyPairName', 'kubeconfigContent', 'clusterId', 'clusterType', 'cloudConfig']) {
      expect(page.find(`[data-field="${ f }"]`).exists()).toBe(false);
    }
  });

  it('writes the machine config a user fills in, which the driver accepts (fixtures/hcivmconfig.json)', async() => {
    const { page, value, events } = await mountMachineConfig();
    const disk = () => page.find('[data-disk="0"]');

    await choose(page, 'cpuCount', '4');
    await choose(page, 'memorySize', '8');
    await choose(page, 'sshUser', 'ubuntu');
    await choose(page, 'diskInfo', 'default/noble', { within: disk(), col: 'imageName' });
    await page.find('[data-add="volume"]').trigger('click');
    await choose(page, 'diskInfo', 100, { within: page.find('[data-disk="1"]'), col: 'size' });
    await choose(page, 'diskInfo', false, { within: page.find('[data-disk="1"]'), col: 'autoDelete' });
    await choose(page, 'networkInfo', 'default/vlan1', { within: page.find('[data-nic="0"]'), col: 'networkName' });
    await choose(page, 'networkInfo', '52:54:00:12:34:56', { within: page.find('[data-nic="0"]'), col: 'macAddress' });
    await page.find('[data-add="vgpus"]').trigger('click');
    await choose(page, 'vgpuInfo', 'nvidia.com/NVIDIA_A2-2Q', { within: page.find('[data-list="vgpus"] .hcivm-device-row'), col: 'deviceName' });
    await choose(page, 'userData', '#cloud-config\npackages: [htop]\n', { kind: YamlEditor });
    await choose(page, 'enableEfi', true);
    await choose(page, 'enableTpm', true);
    await choose(page, 'persistentTpm', true);
    await choose(page, 'persistentEfi', true);
    await choose(page, 'blockMultiQueue', true);
    await choose(page, 'ioThreadsPolicy', 'supplementalPool');
    await choose(page, 'ioThreadCount', '4');
    await choose(page, 'machineType', 'q35');
    await choose(page, 'zone', ['zone-a']);
    await choose(page, 'ipPool', '10.0.0.10-10.0.0.59/24');
    await choose(page, 'ipPoolGateway', '10.0.0.1');
    await choose(page, 'sshKeypairs', ['default/alice']);
    await choose(page, 'createTimeout', '1200');
    await choose(page, 'evictionStrategy', 'LiveMigrate');
    await choose(page, 'vmLabels', { team: 'infra' });
    await choose(page, 'generateCloudProviderConfig', true);
    await choose(page, 'vmPatch', '- op: add\n  path: /metadata/annotations/example.com~1owner\n  value: ml\n', { kind: YamlEditor });
    expect(value.vmPatch).toBe('[{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"ml"}]');

    if (process.env.UPDATE_FIXTURES) {
      fs.writeFileSync(FIXTURE, `${ JSON.stringify({
        apiVersion: 'rke-machine-config.cattle.io/v1', kind: 'HcivmConfig', metadata: { name: 'nc-mycluster-pool1-abc12', namespace: 'fleet-default' }, ...value,
      }, null, 2) }\n`);
    }
    const want = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
    const spec = { ...want };

    delete spec.apiVersion;
    delete spec.kind;
    delete spec.metadata;
    expect({ ...value }).toEqual(spec);
    expect(events[events.length - 1]).toBe(true);
    expect(wrapper(page).vm.test()).toBe(true);
  });
});

function wrapper(page) {
  return page.findComponent({ name: 'HcivmMachineConfig' });
}

describe('the cluster\'s Harvester cloud provider', () => {
  it('is chosen on a new cluster whose credential names an imported Harvester, as Rancher does for its own driver', async() => {
    const { cluster, value } = await mountMachineConfig();

    expect(cluster.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name']).toBe('harvester');
    expect(value.clusterName).toBe('mycluster');
  });

  it('is left alone for a pasted kubeconfig, a cluster being edited, or a choice made already', async() => {
    const external = await mountMachineConfig({ credential: rancher.externalCredential() });

    expect(external.cluster.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name']).toBeUndefined();
    const cluster = rancher.newCluster();

    cluster.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name'] = 'external';
    const chosen = await mountMachineConfig({ cluster });

    expect(chosen.cluster.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name']).toBe('external');
  });
});

describe('the machine-config form, validating', () => {
  it('refuses what Rancher\'s Harvester form refuses, in words', async() => {
    const { wrapper: w, page, value, events } = await mountMachineConfig();

    await choose(page, 'cpuCount', '0');
    await choose(page, 'memorySize', '');
    await choose(page, 'sshUser', '');
    await choose(page, 'networkInfo', 'not-a-mac', { within: page.find('[data-nic="0"]'), col: 'macAddress' });
    await choose(page, 'diskInfo', 0, { within: page.find('[data-disk="0"]'), col: 'size' });
    expect(value.cpuCount).toBe('0');
    expect(messages(w)).toEqual([
      '"CPUs" must be equal or higher than 1',
      '"Memory" must be equal or higher than 1',
      '"SSH User" is required',
      'Volume 1: choose an image.',
      'Volume 1: the size must be at least 1 GiB.',
      'Network 1: choose a network.',
      'Network 1: not-a-mac is not a MAC address.',
    ]);
    expect(events[events.length - 1]).toBe(false);
  });

  it('takes user data and network data from a Harvester Secret or the form, not both', async() => {
    const { wrapper: w, page, value } = await mountMachineConfig();

    await choose(page, 'userDataSecret', 'pool1-cloud-init');
    await choose(page, 'networkDataSecret', 'pool1-network:networkdata');
    expect([value.userDataSecret, value.networkDataSecret]).toEqual(['pool1-cloud-init', 'pool1-network:networkdata']);
    const before = messages(w); // a new config's: no volume image, no network yet

    expect(before.filter((m) => /Secret/.test(m))).toEqual([]);
    await choose(page, 'userData', '#cloud-config\npackages: [htop]\n', { kind: YamlEditor });
    await choose(page, 'networkData', 'version: 2\n', { kind: YamlEditor });
    await choose(page, 'ipPool', '10.0.0.10-10.0.0.59/24');
    expect(messages(w)).toEqual([
      ...before,
      'Give the user data here or in a Harvester Secret, not both.',
      'Give the network data here or in a Harvester Secret, not both.',
      'Network data kept in a Harvester Secret cannot be used with static addresses; give it here instead, where it is checked against the address range.',
    ]);
  });

  it('counts vGPUs over every pool of the cluster', async() => {
    const a2 = '{"vGPURequests":[{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}';
    const other = { ...rancher.savedConfig(), vgpuInfo: a2 };
    const config = { ...rancher.savedConfig(), vgpuInfo: '' };
    const pools = [rancher.pool('pool1', 1, other), rancher.pool('pool2', 2, config)];
    const { wrapper: w, page, value } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), pools, poolIndex: 1, config });

    expect(messages(w)).toEqual([]);
    await page.find('[data-add="vgpus"]').trigger('click');
    await choose(page, 'vgpuInfo', 'nvidia.com/NVIDIA_A2-2Q', { within: page.find('[data-list="vgpus"] .hcivm-device-row'), col: 'deviceName' });
    expect(value.vgpuInfo).toBe(a2);
    expect(messages(w)).toEqual(['nvidia.com/NVIDIA_A2-2Q: the cluster\'s pools ask for 3, Harvester has 1 free.']);
  });
});

describe('the machine-config form, editing a cluster', () => {
  it('gives a pool added to an existing cluster its clusterName, the first pool\'s namespace, a volume and a network', async() => {
    const cluster = rancher.clusterForEdit();
    const config = newConfig();
    const pools = [rancher.pool('pool1', 3, rancher.savedConfig()), rancher.pool('pool2', 1, config, true)];
    const { value, machinePools, wrapper: w } = await mountMachineConfig({ mode: 'edit', cluster, pools, poolIndex: 1, config });

    expect(value.clusterName).toBe('mycluster');
    expect(value.vmNamespace).toBe(machinePools[0].config.vmNamespace);
    // What Rancher's Harvester form gives a new pool (harvester.vue fetch: a disk of 40 GiB from an image to
    // choose, boot order 1; a network to choose), also on the edit page, where it opens a new pool in mode edit.
    expect(JSON.parse(value.diskInfo)).toEqual({ disks: [{ imageName: '', size: 40, bootOrder: 1 }] });
    expect(JSON.parse(value.networkInfo)).toEqual({ interfaces: [{ networkName: '' }] });
    expect(w.vm.namespaceDisabled).toBe(true);
  });

  it('keeps a saved pool\'s lists as they are, and disables its namespace as Rancher\'s Harvester form does', async() => {
    const legacy = {
      ...newConfig(), id: 'fleet-default/nc-mycluster-pool1-abcde', clusterName: 'mycluster', imageName: 'default/ubuntu', networkName: 'default/vlan1',
    };
    const { value, page, wrapper: w } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), config: legacy });

    expect([value.diskInfo, value.networkInfo]).toEqual(['', '']);
    expect(w.vm.namespaceDisabled).toBe(true);
    expect(control(page, 'vmNamespace').props('disabled')).toBe(true);
    const created = await mountMachineConfig();

    expect(created.wrapper.vm.namespaceDisabled).toBe(false);
  });

  it('refuses a pool without clusterName when the cluster has no name', async() => {
    const cluster = rancher.newCluster('');
    const { wrapper: w, value } = await mountMachineConfig({ cluster });

    expect(value.clusterName).toBe('');
    expect(messages(w)).toContain('The cluster needs a name before its machines can be made.');
  });

  it('changes nothing of a saved pool it opens, also what it shows no control for', async() => {
    const saved = rancher.savedConfig();
    const { value } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), config: rancher.savedConfig() });

    expect({ ...value }).toEqual(saved);
  });

  it('keeps a volume\'s other keys when one is changed', async() => {
    const { page, value } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), config: rancher.savedConfig() });

    await choose(page, 'diskInfo', false, { within: page.find('[data-disk="1"]'), col: 'hotPlugAble' });
    expect(JSON.parse(value.diskInfo).disks).toEqual([
      { imageName: 'default/ubuntu', size: 40, bootOrder: 1, hotPlugAble: false },
      { storageClassName: 'longhorn', size: 100, bootOrder: 2, hotPlugAble: false, accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem', autoDelete: false },
    ]);
  });

  it('shows base64 user data as text and writes it back as base64', async() => {
    const { page, value } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), config: rancher.savedConfig() });

    expect(control(page, 'userData', { kind: YamlEditor }).props('value')).toBe('#cloud-config\npackages:\n  - htop\n');
    await choose(page, 'userData', '#cloud-config\npackages:\n  - vim\n', { kind: YamlEditor });
    expect(Buffer.from(value.userData, 'base64').toString()).toBe('#cloud-config\npackages:\n  - vim\n');
  });

  it('moves a config without a volume list into one when a volume is added', async() => {
    const legacy = {
      ...newConfig(), clusterName: 'mycluster', imageName: 'default/ubuntu', diskSize: '30', diskBus: 'scsi', networkName: 'default/vlan1',
    };
    const { page, value } = await mountMachineConfig({ mode: 'edit', cluster: rancher.clusterForEdit(), config: legacy });

    expect(control(page, 'imageName', { kind: LabeledSelect }).props('value')).toBe('default/ubuntu');
    expect(value.diskInfo).toBe('');
    await page.find('[data-add="image"]').trigger('click');
    expect(JSON.parse(value.diskInfo).disks).toEqual([{ imageName: 'default/ubuntu', size: 30, bootOrder: 1, bus: 'scsi' }, { imageName: '', size: 40 }]);
    expect([value.imageName, value.diskSize, value.diskBus]).toEqual(['', '0', '']);
  });
});

describe('the machine-config form, viewing', () => {
  it('reads nothing from Harvester and changes nothing', async() => {
    const saved = rancher.savedConfig();
    const { page, value, calls } = await mountMachineConfig({ mode: 'view', cluster: rancher.clusterForEdit(), config: rancher.savedConfig() });

    await flush();
    expect(requested(calls)).toEqual([]);
    expect({ ...value }).toEqual(saved);
    expect(control(page, 'cpuCount').props('mode')).toBe('view');
    expect(page.find('[data-add="volume"]').exists()).toBe(false);
  });
});

describe('the machine-config form, with a pasted kubeconfig', () => {
  it('reads nothing from Harvester and says why the lists take text', async() => {
    const { page, calls } = await mountMachineConfig({ credential: rancher.externalCredential() });

    expect(requested(calls)).toEqual([]);
    expect(text(page)).toContain('This credential holds a pasted kubeconfig');
    // Only the value the config has; the select takes any name typed in.
    expect(control(page, 'vmNamespace', { kind: LabeledSelect }).props('options')).toEqual([{ value: 'default', label: 'default' }]);
    expect(control(page, 'vmNamespace', { kind: LabeledSelect }).vm.$attrs.taggable).toBe(true);
  });
});
