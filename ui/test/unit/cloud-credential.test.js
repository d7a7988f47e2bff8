import jsyaml from 'js-yaml';
import flagTable from '../../pkg/hcivm/flags.json';
import { PERMISSIONS, permissionRows } from '../../pkg/hcivm/lib/permissions';
import { ACCOUNT_ANNOTATION, ACCOUNT_LABEL, needsFor } from '../../pkg/hcivm/lib/account';
import { AccountError, ensureAccount, timing } from '../../pkg/hcivm/lib/account-api';
import * as rancher from '../fixtures/rancher';
import { CA_PEM, harvesterVip, kubeApi, tokenOf } from '../rancher/kube';
import { flush, mountCredential, registered, text } from './helpers';
import { makeStore } from '../rancher/host';
import {
  Checkbox, choose, control, LabeledInput, LabeledSelect, RadioGroup
} from './controls';

// What the credential page would save: the model's fields as Rancher's API takes them (shell/models/
// cloudcredential.js: the form writes hcivmcredentialConfig through setData; annotations as set).
const saved = (value) => ({ config: { ...value.hcivmcredentialConfig }, annotations: { ...value.annotations } });
const objects = (kube, kind) => Object.entries(kube.objects()).filter(([k]) => k.includes(`/${ kind }/`)).map(([, v]) => v);
const names = (list) => list.map((o) => `${ o.metadata.namespace ? `${ o.metadata.namespace }/` : '' }${ o.metadata.name }`).sort();

beforeAll(() => {
  timing.wait = async() => {};
});

// createImported fills the form as an admin does: the imported cluster, namespaces and options, and saves (the
// page awaits test() first: shell/edit/cloudcredential.vue saveCredential).
async function createImported({ namespaces = ['default', 'vms'], options = [], kube = kubeApi({ objects: harvesterVip() }) } = {}) {
  const mounted = await mountCredential({ kube });
  const { page } = mounted;

  await choose(page, 'clusterId', rancher.HARVESTER_ID);
  await flush();
  await choose(page, 'namespaces', namespaces);
  for (const o of options) {
    page.findAllComponents(Checkbox).find((c) => c.attributes('data-option') === o).vm.$emit('update:value', true);
  }
  await flush(1);

  return { ...mounted, kube, result: await mounted.wrapper.vm.test() };
}

describe('the cloud-credential form, making the driver\'s account in an imported Harvester', () => {
  it('reads the cluster\'s namespaces and Harvester\'s address through Rancher, and asks for the namespaces', async() => {
    const { page, wrapper, calls, events } = await mountCredential();

    expect(control(page, 'clusterId', { kind: LabeledSelect }).props('options')).toEqual([{ value: rancher.HARVESTER_ID, label: 'harvester-prod' }]);
    await choose(page, 'clusterId', rancher.HARVESTER_ID);
    await flush();
    expect(calls.map((c) => c.arg.url).filter(Boolean)).toEqual(expect.arrayContaining([
      `/k8s/clusters/${ rancher.HARVESTER_ID }/v1/namespaces`,
      `/k8s/clusters/${ rancher.HARVESTER_ID }/api/v1/namespaces/harvester-system/configmaps/vip`,
    ]));
    expect(control(page, 'server', { kind: LabeledInput }).props('value')).toBe('https://10.0.0.5:6443');
    expect(control(page, 'namespaces', { kind: LabeledSelect }).props('options').map((o) => o.value)).toEqual(['default', 'vms']);
    await expect(wrapper.vm.test()).resolves.toEqual({ errors: ['"Namespaces" is required'] });
    expect(events[events.length - 1]).toBe(false);
    await choose(page, 'namespaces', ['default']);
    expect(events[events.length - 1]).toBe(true);
  });

  it('makes, on save, a service account with the driver\'s roles in the namespaces chosen and a kubeconfig of its token', async() => {
    const { value, kube, result } = await createImported();

    expect(result).toBe(true);
    const [sa] = objects(kube, 'serviceaccounts');
    const name = sa.metadata.name;

    expect(name).toMatch(/^hcivm-[a-z0-9]{5}$/);
    expect(names(objects(kube, 'serviceaccounts'))).toEqual([`default/${ name }`]);
    expect(names(objects(kube, 'secrets'))).toEqual([`default/${ name }-token`]);
    expect(names(objects(kube, 'roles'))).toEqual([`default/${ name }`, `vms/${ name }`]);
    expect(names(objects(kube, 'rolebindings'))).toEqual([`default/${ name }`, `vms/${ name }`]);
    expect(names(objects(kube, 'clusterroles'))).toEqual([name]);
    expect(names(objects(kube, 'clusterrolebindings'))).toEqual([name]);
    // Every object the form made carries the account's label; the token is the account's and owned by it.
    for (const o of Object.values(kube.objects()).filter((x) => x.metadata.name !== 'vip')) {
      expect(o.metadata.labels).toEqual({ [ACCOUNT_LABEL]: name });
    }
    const [token] = objects(kube, 'secrets');

    expect(token.type).toBe('kubernetes.io/service-account-token');
    expect(token.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'ServiceAccount', name, uid: sa.metadata.uid }]);
    for (const b of [...objects(kube, 'rolebindings'), ...objects(kube, 'clusterrolebindings')]) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name, namespace: 'default' }]);
    }
    const kubeconfig = jsyaml.load(saved(value).config.kubeconfigContent);

    expect(kubeconfig.clusters[0].cluster).toEqual({ server: 'https://10.0.0.5:6443', 'certificate-authority-data': btoa(CA_PEM) });
    expect(kubeconfig.users[0].user).toEqual({ token: tokenOf(token.metadata.uid) });
    expect(kubeconfig.contexts[0].context).toEqual({ cluster: 'default', user: 'default', namespace: 'default' });
    expect(saved(value).config).toMatchObject({ clusterType: 'imported', clusterId: rancher.HARVESTER_ID });
    expect(JSON.parse(saved(value).annotations[ACCOUNT_ANNOTATION])).toEqual({
      name, namespace: 'default', namespaces: ['default', 'vms'], options: [], server: 'https://10.0.0.5:6443',
    });
  });

  it('grants every permission of the driver\'s table the account needs, in its place, and nothing else', async() => {
    for (const options of [[], ['ipPool', 'keyPairName', 'generateCloudProviderConfig', 'userDataSecret']]) {
      const { kube } = await createImported({ options });
      const granted = [];

      for (const [path, o] of Object.entries(kube.objects())) {
        const place = o.kind === 'ClusterRole' ? 'cluster' : (o.kind === 'Role' ? o.metadata.namespace : '');

        for (const r of (place && o.rules) || []) {
          for (const v of r.verbs) {
            granted.push(`${ place } ${ r.apiGroups[0] }/${ r.resources[0] }${ r.resourceNames ? `:${ r.resourceNames[0] }` : '' } ${ v }`);
          }
        }
        expect(path).not.toContain('undefined');
      }
      const wanted = new Set();

      for (const n of needsFor(options)) {
        for (const a of n.access) {
          const places = a.clusterScoped ? ['cluster'] : (a.namespace ? [a.namespace] : ['default', 'vms']);

          places.forEach((p) => wanted.add(`${ p } ${ a.group || '' }/${ a.resource }${ a.name ? `:${ a.name }` : '' } ${ a.verb }`));
        }
      }
      expect(granted.sort()).toEqual([...wanted].sort());
    }
    // The options' needs are left out unless allowed.
    expect(needsFor([]).map((n) => n.when)).not.toContain('static addresses');
    expect(needsFor(['ipPool']).map((n) => n.when)).toContain('static addresses');
  });

  it('makes the same account again on a second save, changing nothing', async() => {
    const { wrapper, kube } = await createImported();
    const before = kube.objects();

    expect(await wrapper.vm.test()).toBe(true);
    expect(kube.objects()).toEqual(before);
  });

  it('says what Harvester refused, and saves nothing', async() => {
    const kube = kubeApi({ objects: harvesterVip(), forbidden: ['create clusterroles'] });
    const { value, result } = await createImported({ kube });

    expect(result.errors[0]).toMatch(/^Harvester refused to create ClusterRole hcivm-[a-z0-9]{5}: clusterroles\.rbac\.authorization\.k8s\.io is forbidden: User "u-abc12" cannot create resource "clusterroles" in API group "rbac\.authorization\.k8s\.io" at the cluster scope\. Making the driver's account needs a Rancher user who may make service accounts and roles in this Harvester cluster/);
    expect(value.decodedData.kubeconfigContent).toBeUndefined();
    expect(value.annotations[ACCOUNT_ANNOTATION]).toBeUndefined();
  });

  it('refuses an address that is not Harvester\'s API, such as Rancher\'s proxy', async() => {
    const { page, wrapper } = await mountCredential();

    await choose(page, 'clusterId', rancher.HARVESTER_ID);
    await flush();
    await choose(page, 'namespaces', ['default']);
    await choose(page, 'server', `https://rancher.example.com/k8s/clusters/${ rancher.HARVESTER_ID }`, { kind: LabeledInput });
    expect((await wrapper.vm.test()).errors[0]).toBe(`"https://rancher.example.com/k8s/clusters/${ rancher.HARVESTER_ID }" is not Harvester's API address: give https://<address or name>:<port> without a path (not Rancher's /k8s/clusters/... address).`);
    await choose(page, 'server', '', { kind: LabeledInput });
    expect((await wrapper.vm.test()).errors[0]).toBe('Harvester\'s API address is required: the driver reaches Harvester there.');
  });

  it('takes a pasted kubeconfig, of type external without a cluster id', async() => {
    const { page, wrapper, value, events } = await mountCredential();

    await choose(page, 'clusterType', 'external', { kind: RadioGroup });
    expect(await wrapper.vm.test()).toEqual({ errors: ['"Kubeconfig" is required'] });
    await choose(page, 'kubeconfigContent', 'YXBpVmVyc2lvbjogdjEK', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external', kubeconfigContent: 'YXBpVmVyc2lvbjogdjEK' });
    expect(events[events.length - 1]).toBe(true);
    expect(await wrapper.vm.test()).toBe(true);
  });
});

describe('the token of the driver\'s account', () => {
  const account = {
    name: 'hcivm-t0k3n', namespace: 'default', namespaces: ['default'], options: [], server: 'https://10.0.0.5:6443',
  };
  const ensure = async(kube, tries = 3) => {
    const { store } = await makeStore(registered, { kube });

    return ensureAccount(store.dispatch, rancher.HARVESTER_ID, account, { wait: async() => {}, tries });
  };

  it('is waited for until kube-controller-manager fills it in, and only so long', async() => {
    expect(jsyaml.load(await ensure(kubeApi({ objects: harvesterVip(), fillAfter: 3 }))).users[0].user.token).toMatch(/^eyJ/);
    const late = await ensure(kubeApi({ objects: harvesterVip(), fillAfter: 9 })).catch((e) => e);

    expect(late).toBeInstanceOf(AccountError);
    expect([late.key, late.args]).toEqual(['tokenTimeout', { what: 'default/hcivm-t0k3n-token', seconds: 3 }]);
  });

  it('is refused when the Secret holds more than a token can be, and never quoted', async() => {
    const secret = {
      apiVersion: 'v1',
      kind:       'Secret',
      type:       'kubernetes.io/service-account-token',
      metadata:   {
        name: 'hcivm-t0k3n-token', namespace: 'default', uid: 'u9', resourceVersion: '3', labels: { [ACCOUNT_LABEL]: 'hcivm-t0k3n' }, annotations: { 'kubernetes.io/service-account.name': 'hcivm-t0k3n' },
      },
      data: { token: 'A'.repeat(20000), 'ca.crt': btoa(CA_PEM) },
    };
    const err = await ensure(kubeApi({ objects: { ...harvesterVip(), 'api/v1/namespaces/default/secrets/hcivm-t0k3n-token': secret } })).catch((e) => e);

    expect([err.key, err.args]).toEqual(['tokenUnusable', { what: 'default/hcivm-t0k3n-token' }]);
    expect(JSON.stringify(err)).not.toContain('AAAA');
  });
});

describe('the cloud-credential form, editing what Rancher\'s API returns (no kubeconfig)', () => {
  const withAccount = (account) => ({
    ...rancher.importedCredential(),
    annotations: { ...rancher.importedCredential().annotations, [ACCOUNT_ANNOTATION]: JSON.stringify(account) },
  });
  const account = {
    name: 'hcivm-k3x9q', namespace: 'default', namespaces: ['default', 'vms'], options: [], server: 'https://10.0.0.5:6443',
  };

  it('keeps the kubeconfig of a credential with an account, and lists what removes the account', async() => {
    const kube = kubeApi({ objects: harvesterVip() });
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: withAccount(account), kube });

    expect(await wrapper.vm.test()).toBe(true);
    expect(saved(value).config).toEqual({ clusterId: rancher.HARVESTER_ID, clusterType: 'imported' });
    expect(Object.keys(kube.objects())).toHaveLength(1); // nothing changed, nothing made
    expect(page.find('[data-commands]').text()).toBe([
      'kubectl delete clusterrolebinding,clusterrole -l hcivm.cattle.io/credential-account=hcivm-k3x9q',
      'kubectl delete --all-namespaces rolebinding,role,secret,serviceaccount -l hcivm.cattle.io/credential-account=hcivm-k3x9q',
    ].join('\n'));
  });

  it('changes the account when its namespaces change: the Role leaves a namespace no longer chosen', async() => {
    const kube = kubeApi({ objects: harvesterVip() });
    const first = await createImported({ kube });
    const made = JSON.parse(first.value.annotations[ACCOUNT_ANNOTATION]);
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: withAccount(made), kube });

    await choose(page, 'namespaces', ['default']);
    expect(await wrapper.vm.test()).toBe(true);
    expect(names(objects(kube, 'roles'))).toEqual([`default/${ made.name }`]);
    expect(names(objects(kube, 'rolebindings'))).toEqual([`default/${ made.name }`]);
    expect(JSON.parse(value.annotations[ACCOUNT_ANNOTATION]).namespaces).toEqual(['default']);
    expect(jsyaml.load(value.decodedData.kubeconfigContent).users[0].user.token).toBe(tokenOf(objects(kube, 'secrets')[0].metadata.uid));
  });

  it('makes a new token when asked, the old one deleted with its Secret', async() => {
    const kube = kubeApi({ objects: harvesterVip() });
    const first = await createImported({ kube });
    const made = JSON.parse(first.value.annotations[ACCOUNT_ANNOTATION]);
    const uid = () => objects(kube, 'secrets')[0].metadata.uid;
    const before = uid();
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: withAccount(made), kube });

    expect(await wrapper.vm.test()).toBe(true);
    expect(uid()).toBe(before);
    await page.find('[data-action="rotate"]').trigger('click');
    expect(text(page)).toContain(`Saving deletes the token Secret of ${ made.name } in Harvester and makes a new one`);
    expect(await wrapper.vm.test()).toBe(true);
    expect(objects(kube, 'secrets')).toHaveLength(1);
    expect(uid()).not.toBe(before);
    expect(jsyaml.load(value.decodedData.kubeconfigContent).users[0].user.token).toBe(tokenOf(uid()));
    expect(jsyaml.load(first.value.decodedData.kubeconfigContent).users[0].user.token).toBe(tokenOf(before));
    expect(page.find('[data-action="rotate"]').exists()).toBe(true);
  });

  it('leaves alone an object of the account\'s name it did not make', async() => {
    const kube = kubeApi({
      objects: {
        ...harvesterVip(),
        'apis/rbac.authorization.k8s.io/v1/namespaces/vms/roles/hcivm-k3x9q': {
          apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'hcivm-k3x9q', namespace: 'vms', uid: 'u1', resourceVersion: '1' }, rules: [],
        },
      },
    });
    const { page, wrapper } = await mountCredential({ mode: 'edit', data: withAccount({ ...account, namespaces: ['default'] }), kube });

    await choose(page, 'namespaces', ['default', 'vms']);
    expect((await wrapper.vm.test()).errors).toEqual(['Role vms/hcivm-k3x9q exists in Harvester and was not made by this form for this credential (it lacks the label hcivm.cattle.io/credential-account=hcivm-k3x9q), so it is left alone. Delete it in Harvester if nothing uses it, then save again.']);
    expect(kube.objects()['apis/rbac.authorization.k8s.io/v1/namespaces/vms/roles/hcivm-k3x9q'].rules).toEqual([]);
  });

  it('says that a kubeconfig Rancher made expires, and makes an account for it when asked', async() => {
    const kube = kubeApi({ objects: harvesterVip() });
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: rancher.importedCredential(), kube });

    expect(text(page)).toContain('This credential\'s kubeconfig holds a Rancher token of yours, which expires');
    expect(await wrapper.vm.test()).toBe(true);
    expect(Object.keys(kube.objects())).toHaveLength(1);
    await page.find('[data-action="makeAccount"]').trigger('click');
    await flush();
    expect(control(page, 'server', { kind: LabeledInput }).props('value')).toBe('https://10.0.0.5:6443');
    await choose(page, 'namespaces', ['vms']);
    expect(await wrapper.vm.test()).toBe(true);
    expect(jsyaml.load(value.decodedData.kubeconfigContent).contexts[0].context.namespace).toBe('vms');
    expect(objects(kube, 'serviceaccounts')).toHaveLength(1);
  });

  it('keeps a pasted kubeconfig unless one is pasted to replace it', async() => {
    const { page, wrapper, value } = await mountCredential({ mode: 'edit', data: rancher.externalCredential() });

    expect(await wrapper.vm.test()).toBe(true);
    expect(control(page, 'kubeconfigContent', { kind: LabeledInput }).props('placeholder')).toBe('Leave empty to keep the saved kubeconfig, or paste a new one to replace it.');
    expect(saved(value).config).toEqual({ clusterType: 'external' });
    await choose(page, 'kubeconfigContent', 'apiVersion: v1\n', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external', kubeconfigContent: 'apiVersion: v1\n' });
    await choose(page, 'kubeconfigContent', '', { kind: LabeledInput });
    expect(saved(value).config).toEqual({ clusterType: 'external' });
  });

  it('moves the first release\'s annotation into the public field Rancher reads', async() => {
    const { wrapper, value } = await mountCredential({ mode: 'edit', data: rancher.firstReleaseCredential() });

    expect(await wrapper.vm.test()).toBe(true);
    expect(saved(value).config).toEqual({ clusterId: rancher.HARVESTER_ID, clusterType: 'imported' });
  });

  it('reads nothing from a hand-edited annotation it cannot trust', async() => {
    for (const bad of ['{', JSON.stringify({ ...account, name: 'Not A Name' }), JSON.stringify({ ...account, options: ['everything'] }),
      JSON.stringify({ ...account, server: 'http://10.0.0.5' }), JSON.stringify({ ...account, namespaces: 'x'.repeat(5000) })]) {
      const data = { ...rancher.importedCredential(), annotations: { [ACCOUNT_ANNOTATION]: bad } };
      const { page } = await mountCredential({ mode: 'view', data });

      expect(page.find('[data-commands]').exists()).toBe(false);
    }
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

describe('what the credential may do', () => {
  it('is one line, with the table one click away', async() => {
    const { page } = await mountCredential();

    expect(page.find('.hcivm-permissions').exists()).toBe(false);
    expect(text(page)).toContain('The driver may make, watch and remove virtual machines and their cloud-init Secrets in these namespaces');
    const rows = permissionRows(needsFor([]));

    expect(page.find('[data-action="permissions"]').text()).toBe(`Show the ${ rows.length } permissions`);
    await page.find('[data-action="permissions"]').trigger('click');
    expect(page.findAll('.hcivm-permissions tbody tr')).toHaveLength(rows.length);
    expect(page.find('.hcivm-permissions').text()).toContain('virtualmachines');
    expect(page.find('[data-action="permissions"]').text()).toBe('Hide the permissions');
  });

  it('names the options allowed in the line, and the table grows with them', async() => {
    const { page } = await createImported({ options: ['ipPool'] });

    expect(text(page)).toContain('; also: static addresses.');
    await page.find('[data-action="permissions"]').trigger('click');
    expect(page.findAll('.hcivm-permissions tbody tr')).toHaveLength(permissionRows(needsFor(['ipPool'])).length);
    expect(page.find('.hcivm-permissions').text()).toContain('configmaps');
  });

  it('is every permission for a pasted kubeconfig, fields named by their labels', async() => {
    const { page } = await mountCredential();

    await choose(page, 'clusterType', 'external', { kind: RadioGroup });
    expect(text(page)).toContain('The pasted kubeconfig\'s user must be allowed to');
    await page.find('[data-action="permissions"]').trigger('click');
    expect(page.findAll('.hcivm-permissions tbody tr')).toHaveLength(PERMISSIONS.length);
    expect(page.find('.hcivm-permissions').text()).toContain('Make the cloud provider\'s kubeconfig');
    expect(page.find('.hcivm-permissions').text()).not.toContain('generateCloudProviderConfig');
    // Every field is named by a label of its own (a missing one would show its key between % signs).
    expect(page.find('.hcivm-permissions').text()).not.toContain('%');
    expect(page.find('.hcivm-permissions').text()).toContain('Key Pair of the SSH Private Key, SSH Key Pairs');
  });

  it('folds the driver\'s permission needs (flags.json) into rows', () => {
    const row = (when, resource) => PERMISSIONS.find((p) => p.when.startsWith(when) && p.resource === resource);

    expect(PERMISSIONS.filter((p) => p.when === 'always').map((p) => [p.group, p.resource, p.verbs, p.where])).toEqual([
      ['', 'secrets', 'create, patch', 'VM namespace'],
      ['kubevirt.io', 'virtualmachines', 'create, list, watch, update, delete', 'VM namespace'],
      ['kubevirt.io', 'virtualmachineinstances', 'list, watch', 'VM namespace'],
      ['harvesterhci.io', 'virtualmachineimages', 'get', 'image\'s namespace'],
      ['', 'secrets', 'get, delete', 'VM namespace'],
      ['', 'persistentvolumeclaims', 'list', 'VM namespace'],
    ]);
    expect(row('static addresses', 'configmaps')).toMatchObject({ fields: 'ipPool', where: 'network\'s namespace' });
    expect(row('cloud-provider kubeconfig', 'roles, rolebindings')).toMatchObject({ where: 'VM namespace' });
    expect(flagTable.permissions.length).toBeGreaterThan(5);
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
