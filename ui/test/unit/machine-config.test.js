import fs from 'fs';
import path from 'path';
import { RESOURCES } from '../../pkg/hcivm/lib/harvester';
import { CLUSTER_ID, PREFIX } from './fakes';
import { mountForm } from './helpers';

const FIXTURE = path.join(__dirname, '../fixtures/hcivmconfig.json');
const requested = (calls) => calls.filter((c) => c.action === 'cluster/request').map((c) => c.arg.url).sort();
const problemFields = (w) => w.vm.problems.map((p) => p.field).sort();

describe('the machine-config form', () => {
  it('reads the credential, then Harvester through Rancher\'s proxy for the credential\'s cluster', async() => {
    const { calls } = await mountForm();

    expect(calls[0]).toEqual({ action: 'rancher/find', arg: { type: 'cloudcredential', id: 'cattle-global-data:cc-1' } });
    expect(requested(calls)).toEqual([
      ...Object.values(RESOURCES).map((r) => `${ PREFIX }/${ r }`),
      `${ PREFIX }/harvester/cluster/local`,
      `/k8s/clusters/${ CLUSTER_ID }/v1/harvester/cluster/local?link=deviceCapacity`,
    ].sort());
  });

  it('offers what Harvester has: namespaces, images but ISOs, networks, key pairs of the namespace, zones, devices with free capacity', async() => {
    const { wrapper } = await mountForm();
    const options = (field) => wrapper.find(`[data-field="${ field }"]`).findAll('option, label > input').map((o) => o.element.value).filter(Boolean);

    expect(options('vmNamespace')).toEqual(['default', 'vms']);
    expect(options('imageName')).toEqual(['default/ubuntu']);
    expect(wrapper.find('[data-field="imageName"]').text()).toContain('storage class longhorn-ubuntu');
    expect(options('networkName')).toEqual(['default/vlan1']);
    expect(options('sshKeypairs')).toEqual(['default/alice', 'default/bob']);
    expect(options('zone')).toEqual(['zone-a', 'zone-b']);
    expect(options('region')).toEqual(['r1']);
    expect(wrapper.vm.choices.vgpuTypes).toEqual([{ value: 'nvidia.com/NVIDIA_A2-2Q', label: 'nvidia.com/NVIDIA_A2-2Q (1 free)' }]);
    expect(wrapper.vm.choices.hostDeviceTypes).toEqual([{ value: 'nvidia.com/GA102GL_A10', label: 'nvidia.com/GA102GL_A10 (1 free)' }]);
  });

  it('fills clusterName from the cluster and says what the second name lacks', async() => {
    const { wrapper, value } = await mountForm();

    expect(value.clusterName).toBe('mycluster');
    expect(wrapper.find('.hcivm-notes').text()).toMatch(/does not preselect the Harvester cloud provider/);
    expect(wrapper.find('.hcivm-notes').text()).toMatch(/Harvester cleanup does not run/);
  });

  it('takes text when the credential is a pasted kubeconfig, and reads nothing from Harvester', async() => {
    const { wrapper, calls } = await mountForm({ credential: { id: 'cattle-global-data:cc-2', annotations: {} } });

    expect(requested(calls)).toEqual([]);
    expect(wrapper.find('[data-field="imageName"] input[type="text"]').exists()).toBe(true);
    expect(wrapper.find('.hcivm-no-cluster').exists()).toBe(true);
  });

  it('refuses a config without namespace, image or network, and emits validationChanged', async() => {
    const { wrapper, value, events } = await mountForm();

    value.vmNamespace = '';
    await wrapper.vm.$nextTick();
    expect(problemFields(wrapper)).toEqual(['imageName', 'networkName', 'vmNamespace']);
    expect(events[events.length - 1]).toBe(false);
    expect(wrapper.vm.test().errors).toHaveLength(3);
    expect(wrapper.find('[data-field="vmNamespace"]').text()).toContain('Choose the namespace');

    Object.assign(value, { vmNamespace: 'default', imageName: 'default/ubuntu', diskSize: '40', networkName: 'default/vlan1' });
    await wrapper.vm.$nextTick();
    expect(problemFields(wrapper)).toEqual([]);
    expect(events[events.length - 1]).toBe(true);
    expect(wrapper.vm.test()).toBe(true);
  });

  it('refuses a static pool without addresses', async() => {
    const { wrapper, value } = await mountForm();

    Object.assign(value, { imageName: 'default/ubuntu', diskSize: '40', networkName: 'default/vlan1', ipPoolGateway: '10.0.0.1' });
    await wrapper.vm.$nextTick();
    expect(problemFields(wrapper)).toEqual(['ipPool']);
    value.ipPool = '10.0.0.10-10.0.0.59/24';
    await wrapper.vm.$nextTick();
    expect(problemFields(wrapper)).toEqual([]);
  });

  it('refuses devices beyond their free capacity, counted for every machine of the pool', async() => {
    const { wrapper, value } = await mountForm({ quantity: 2 });

    Object.assign(value, {
      imageName:      'default/ubuntu',
      diskSize:       '40',
      networkName:    'default/vlan1',
      vgpuInfo:       JSON.stringify({ vGPURequests: [{ name: 'gpu1', deviceName: 'nvidia.com/NVIDIA_A2-2Q' }] }),
      hostDeviceInfo: JSON.stringify({ hostDevices: [{ name: 'a10', deviceName: 'nvidia.com/GA102GL_A10' }] }),
    });
    await wrapper.vm.$nextTick();
    // 2 vGPUs of a type with 1 free; 2 A10s where h1 has 2, one held by a running VMI (the Succeeded one holds none).
    expect(wrapper.vm.problems).toEqual([
      { field: 'vgpuInfo', message: 'nvidia.com/NVIDIA_A2-2Q: 2 wanted (1 per machine, 2 machines), 1 free.' },
      { field: 'hostDeviceInfo', message: 'nvidia.com/GA102GL_A10: 2 wanted (1 per machine, 2 machines), 1 free.' },
    ]);
  });

  // The config a filled form writes is the fixture ui/test/fixtures/hcivmconfig.json, which the driver's parser
  // accepts (cmd/docker-machine-driver-harvester machineconfig_ui_test.go). UPDATE_FIXTURES=1 rewrites it.
  it('writes the machine config the driver accepts', async() => {
    const { wrapper, value } = await mountForm();
    const field = (f) => wrapper.find(`[data-field="${ f }"]`);

    await field('vmNamespace').find('select').setValue('default');
    await field('cpuCount').find('input').setValue('4');
    await field('memorySize').find('input').setValue('8');
    await field('enableEfi').find('input').setValue(true);
    await field('enableTpm').find('input').setValue(true);
    await field('persistentTpm').find('input').setValue(true);
    await field('machineType').find('input').setValue('q35');
    await field('zone').find('input[value="zone-a"]').setValue(true);
    await field('diskInfo').find('[data-add="disks"]').trigger('click');
    await field('diskInfo').find('[data-col="imageName"]').setValue('default/ubuntu');
    await field('diskInfo').find('[data-col="size"]').setValue('40');
    await field('diskInfo').find('[data-col="bootOrder"]').setValue('1');
    await field('diskInfo').find('[data-add="disks"]').trigger('click');
    await field('diskInfo').findAll('[data-col="storageClassName"]')[1].setValue('longhorn');
    await field('diskInfo').findAll('[data-col="size"]')[1].setValue('100');
    await field('diskInfo').findAll('[data-col="autoDelete"]')[1].setValue(false);
    await field('networkInfo').find('[data-add="nics"]').trigger('click');
    await field('networkInfo').find('[data-col="networkName"]').setValue('default/vlan1');
    await field('ipPool').find('input').setValue('10.0.0.10-10.0.0.59/24');
    await field('ipPoolGateway').find('input').setValue('10.0.0.1');
    await field('ipPoolDns').find('input').setValue('10.0.0.2');
    await field('hostDeviceInfo').find('[data-add="hostDevices"]').trigger('click');
    await field('hostDeviceInfo').find('[data-col="name"]').setValue('a10');
    await field('hostDeviceInfo').find('[data-col="deviceName"]').setValue('nvidia.com/GA102GL_A10');
    await field('vgpuInfo').find('[data-add="vgpus"]').trigger('click');
    await field('vgpuInfo').find('[data-col="name"]').setValue('gpu1');
    await field('vgpuInfo').find('[data-col="deviceName"]').setValue('nvidia.com/NVIDIA_A2-2Q');
    await field('sshKeypairs').find('input[value="default/alice"]').setValue(true);
    await field('userData').find('textarea').setValue('#cloud-config\npackages: [htop]\n');
    await field('generateCloudProviderConfig').find('input').setValue(true);
    await field('evictionStrategy').find('select').setValue('LiveMigrate');
    await field('maintenanceStrategy').find('select').setValue('Shutdown');
    await field('vmLabels').find('input').setValue('team=infra');
    await field('createTimeout').find('input').setValue('1200');
    await field('vmPatch').find('textarea').setValue('{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":120}}}}');

    expect(wrapper.vm.problems).toEqual([]);
    const written = JSON.parse(JSON.stringify(value));

    if (process.env.UPDATE_FIXTURES) {
      const doc = { apiVersion: 'rke-machine-config.cattle.io/v1', kind: 'HcivmConfig', metadata: { name: 'nc-mycluster-pool1-abc12', namespace: 'fleet-default' }, ...written };

      fs.writeFileSync(FIXTURE, `${ JSON.stringify(doc, null, 2) }\n`);
    }
    const { apiVersion, kind, metadata, ...fixture } = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));

    expect(kind).toBe('HcivmConfig');
    expect(written).toEqual(fixture);
  });
});
