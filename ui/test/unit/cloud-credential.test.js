import { mount } from '@vue/test-utils';
import { reactive } from 'vue';
import Credential from '../../pkg/hcivm/cloud-credential/hcivm.vue';
import { PERMISSIONS, permissionRows } from '../../pkg/hcivm/lib/permissions';
import { fakeStore, flush } from './fakes';

// A new cloud credential as Rancher's form hands it over: setData writes decodedData.
function newCredential() {
  const v = reactive({ decodedData: {}, annotations: {} });

  v.setData = (k, d) => {
    v.decodedData[k] = d;
  };

  return v;
}

const cluster = (id, provider, kubeconfig) => ({
  id, nameDisplay: id, status: { provider }, generateKubeConfig: jest.fn(async() => kubeconfig),
});

async function mountCredential(clusters) {
  const { store, calls } = fakeStore({ clusters });
  const value = newCredential();
  const events = [];
  const wrapper = mount(Credential, {
    props:  { value, mode: 'create' },
    global: { mocks: { $store: store } },
    attrs:  { onValidationChanged: (v) => events.push(v) },
  });

  await flush();

  return { wrapper, value, calls, events };
}

describe('the cloud-credential form', () => {
  it('lists the imported Harvester clusters and makes the kubeconfig of the one chosen', async() => {
    const clusters = [cluster('c-m-abc12', 'harvester', 'apiVersion: v1\nkind: Config\n'), cluster('c-m-rke2', 'rke2', '')];
    const { wrapper, value, calls, events } = await mountCredential(clusters);

    expect(calls).toEqual([{ action: 'management/findAll', arg: { type: 'management.cattle.io.cluster' } }]);
    expect(wrapper.findAll('#hcivm-cluster option').map((o) => o.element.value)).toEqual(['', 'c-m-abc12']);
    expect(events).toEqual([false]);

    await wrapper.find('#hcivm-cluster').setValue('c-m-abc12');
    await flush();
    expect(clusters[0].generateKubeConfig).toHaveBeenCalledTimes(1);
    expect(value.decodedData.kubeconfigContent).toBe('apiVersion: v1\nkind: Config\n');
    expect(value.annotations['hcivm.cattle.io/clusterId']).toBe('c-m-abc12');
    expect(events[events.length - 1]).toBe(true);
    expect(wrapper.vm.test()).toBe(true);
  });

  it('takes a pasted kubeconfig, without a cluster', async() => {
    const { wrapper, value, events } = await mountCredential([]);

    await wrapper.find('input[value="paste"]').setValue(true);
    expect(wrapper.vm.test().errors).toEqual(['Paste the Harvester kubeconfig.']);
    await wrapper.find('#hcivm-kubeconfig').setValue('YXBpVmVyc2lvbjogdjEK');
    expect(value.decodedData.kubeconfigContent).toBe('YXBpVmVyc2lvbjogdjEK');
    expect(value.annotations['hcivm.cattle.io/clusterId']).toBeUndefined();
    expect(events[events.length - 1]).toBe(true);
  });

  it('shows what the credential must be allowed to do', async() => {
    const { wrapper } = await mountCredential([]);
    const rows = wrapper.findAll('.hcivm-permissions tbody tr');

    expect(rows).toHaveLength(PERMISSIONS.length);
    expect(rows[1].text()).toContain('virtualmachines');
    expect(rows[1].text()).toContain('create, list, watch, update, delete');
    expect(wrapper.find('.hcivm-permissions-note').text()).toContain('generateCloudProviderConfig');
  });

  it('folds the driver\'s permission needs (flags.json) into rows', () => {
    const row = (when, resource) => PERMISSIONS.find((p) => p.when.startsWith(when) && p.resource === resource);

    expect(PERMISSIONS.filter((p) => p.when === 'always')).toEqual([
      {
        when: 'always', fields: '', group: '', resource: 'secrets', verbs: 'create, patch', where: 'VM namespace'
      },
      {
        when: 'always', fields: '', group: 'kubevirt.io', resource: 'virtualmachines', verbs: 'create, list, watch, update, delete', where: 'VM namespace'
      },
      {
        when: 'always', fields: '', group: 'kubevirt.io', resource: 'virtualmachineinstances', verbs: 'list, watch', where: 'VM namespace'
      },
    ]);
    expect(row('static addresses', 'configmaps')).toMatchObject({ fields: 'ipPool', where: 'network\'s namespace' });
    expect(row('host devices (read; check skipped without)', 'pcidevices, usbdevices, pcideviceclaims')).toMatchObject({
      fields: 'hostDeviceInfo, vgpuInfo', verbs: 'list', where: 'cluster'
    });
    expect(row('cloud-provider kubeconfig', 'settings named csi-driver-config, csi-online-expand-validation, server-version')).toMatchObject({
      fields: 'generateCloudProviderConfig', verbs: 'get', where: 'cluster'
    });
    expect(row('cloud-provider kubeconfig', 'roles, rolebindings')).toMatchObject({ where: 'VM namespace' });
  });

  it('gathers verbs per resource and place, then resources with the same verbs', () => {
    const rows = permissionRows([{
      when:   'w',
      flags:  ['d-x'],
      where:  'here',
      access: [
        { group: 'g', resource: 'a', verb: 'get' }, { group: 'g', resource: 'b', verb: 'get' },
        { group: 'g', resource: 'a', verb: 'list' }, { group: 'g', resource: 'c', verb: 'get', namespace: 'other' },
        { group: 'g', resource: 's', verb: 'get', name: 'x', clusterScoped: true },
        { group: 'g', resource: 's', verb: 'get', name: 'y', clusterScoped: true }, { resource: 'd', verb: 'get' },
      ],
    }], { 'd-x': 'x' });

    expect(rows.map((r) => [r.fields, r.group, r.resource, r.verbs, r.where])).toEqual([
      ['x', 'g', 'a', 'get, list', 'here'],
      ['x', 'g', 'b', 'get', 'here'],
      ['x', 'g', 'c', 'get', 'other'],
      ['x', 'g', 's named x, y', 'get', 'cluster'],
      ['x', '', 'd', 'get', 'here'],
    ]);
  });
});
