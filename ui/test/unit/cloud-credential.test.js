import { PERMISSIONS, permissionRows } from '../../pkg/hcivm/lib/permissions';
import * as rancher from '../fixtures/rancher';
import { flush, mountCredential, text } from './helpers';
import { choose, control, LabeledInput, LabeledSelect, RadioGroup } from './controls';

// What the credential page would save: the model's fields as Rancher's API takes them (shell/models/
// cloudcredential.js: the form writes hcivmcredentialConfig through setData; annotations as set).
const saved = (value) => ({ config: { ...value.hcivmcredentialConfig }, annotations: { ...value.annotations } });

describe('the cloud-credential form, creating', () => {
  it('lists the imported Harvester clusters and keeps the chosen one\'s id where Rancher reads it', async() => {
    const { page, wrapper, value, calls, events } = await mountCredential();

    expect(calls).toEqual([{ action: 'management/findAll', arg: { type: 'management.cattle.io.cluster' } }]);
    expect(control(page, 'clusterId', { kind: LabeledSelect }).props('options')).toEqual([{ value: rancher.HARVESTER_ID, label: 'harvester-prod' }]);
    expect(events[events.length - 1]).toBe(false);
    expect(wrapper.vm.test().errors).toEqual(['"Harvester Cluster" is required']);

    await choose(page, 'clusterId', rancher.HARVESTER_ID);
    await flush();
    expect(saved(value).config).toEqual({
      clusterType: 'imported', clusterId: rancher.HARVESTER_ID, kubeconfigContent: 'apiVersion: v1\nkind: Config\nclusters: []\n',
    });
    // decodedData, which rke2.vue setHarvesterChartValues reads, is that config.
    expect(value.decodedData.clusterId).toBe(rancher.HARVESTER_ID);
    expect(events[events.length - 1]).toBe(true);
    expect(wrapper.vm.test()).toBe(true);
  });

  it('takes a pasted kubeconfig, of type external without a cluster id', async() => {
    const { page, wrapper, value, events } = await mountCredential();

    await choose(page, 'clusterType', 'external', { kind: RadioGroup });
    expect(wrapper.vm.test().errors).toEqual(['"Kubeconfig" is required']);
    await choose(page, 'kubeconfigContent', 'YXBpVmVyc2lvbjogdjEK', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external', kubeconfigContent: 'YXBpVmVyc2lvbjogdjEK' });
    expect(events[events.length - 1]).toBe(true);
  });
});

describe('the cloud-credential form, editing what Rancher\'s API returns (no kubeconfig)', () => {
  it('is valid for an imported cluster, keeps the kubeconfig, and can make a new one', async() => {
    const { page, wrapper, value, events } = await mountCredential({ mode: 'edit', data: rancher.importedCredential() });

    expect(value.decodedData.kubeconfigContent).toBeUndefined();
    expect(events[events.length - 1]).toBe(true);
    expect(wrapper.vm.test()).toBe(true);
    expect(control(page, 'clusterId', { kind: LabeledSelect }).props('value')).toBe(rancher.HARVESTER_ID);
    expect(control(page, 'clusterId', { kind: LabeledSelect }).props('disabled')).toBe(true);
    // Saved as is, the update sends no kubeconfigContent: Rancher keeps the Secret's.
    expect(saved(value).config).toEqual({ clusterId: rancher.HARVESTER_ID, clusterType: 'imported' });

    await page.find('[data-action="renew"]').trigger('click');
    await flush();
    expect(saved(value).config.kubeconfigContent).toBe('apiVersion: v1\nkind: Config\nclusters: []\n');
    expect(text(page)).toContain('A new kubeconfig was made; save to keep it.');
  });

  it('keeps a pasted kubeconfig unless one is pasted to replace it', async() => {
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: rancher.externalCredential() });

    expect(wrapper.vm.test()).toBe(true);
    expect(control(page, 'kubeconfigContent', { kind: LabeledInput }).props('placeholder')).toBe('Leave empty to keep the saved kubeconfig, or paste a new one to replace it.');
    expect(saved(value).config).toEqual({ clusterType: 'external' });
    await choose(page, 'kubeconfigContent', 'apiVersion: v1\n', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external', kubeconfigContent: 'apiVersion: v1\n' });
    await choose(page, 'kubeconfigContent', '', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external' });
  });

  it('moves the first release\'s annotation into the public field Rancher reads', async() => {
    const { wrapper, value } = await mountCredential({ mode: 'edit', data: rancher.firstReleaseCredential() });

    expect(wrapper.vm.test()).toBe(true);
    expect(saved(value).config).toEqual({ clusterId: rancher.HARVESTER_ID, clusterType: 'imported' });
  });
});

describe('the cloud-credential form, viewing', () => {
  it('shows the cluster, changes nothing and says the kubeconfig is kept secret', async() => {
    const { page, value } = await mountCredential({ mode: 'view', data: rancher.importedCredential() });

    expect(control(page, 'clusterId', { kind: LabeledSelect }).props('mode')).toBe('view');
    expect(saved(value).config).toEqual(rancher.importedCredential().hcivmcredentialConfig);
    const external = await mountCredential({ mode: 'view', data: rancher.externalCredential() });

    expect(text(external.page)).toContain('Rancher keeps the kubeconfig secret and does not show it.');
    expect(saved(external.value).config).toEqual({ clusterType: 'external' });
  });
});

describe('what the credential must be allowed to do', () => {
  it('is shown as a table, fields named by their labels', async() => {
    const { page } = await mountCredential();
    const rows = page.findAll('.hcivm-permissions tbody tr');

    expect(rows).toHaveLength(PERMISSIONS.length);
    expect(rows[1].text()).toContain('virtualmachines');
    expect(rows[1].text()).toContain('create, list, watch, update, delete');
    expect(page.find('.hcivm-permissions').text()).toContain('Make the cloud provider\'s kubeconfig');
    expect(page.find('.hcivm-permissions').text()).not.toContain('generateCloudProviderConfig');
  });

  it('folds the driver\'s permission needs (flags.json) into rows', () => {
    const row = (when, resource) => PERMISSIONS.find((p) => p.when.startsWith(when) && p.resource === resource);

    expect(PERMISSIONS.filter((p) => p.when === 'always').map((p) => [p.group, p.resource, p.verbs])).toEqual([
      ['', 'secrets', 'create, patch'],
      ['kubevirt.io', 'virtualmachines', 'create, list, watch, update, delete'],
      ['kubevirt.io', 'virtualmachineinstances', 'list, watch'],
    ]);
    expect(row('static addresses', 'configmaps')).toMatchObject({ fields: 'ipPool', where: 'network\'s namespace' });
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
