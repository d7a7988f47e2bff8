import { mount } from '@vue/test-utils';
import { reactive } from 'vue';
import flagTable from '../../pkg/hcivm/flags.json';
import MachineConfig from '../../pkg/hcivm/machine-config/hcivm.vue';
import { CLUSTER_ID, fakeStore, flush } from './fakes';

// newConfig is a new HcivmConfig as Rancher makes it: every field of the form at its declared default (the
// machine-config CRD's defaults; booleans false), the credential's fields left out.
export function newConfig() {
  const v = {};

  for (const f of flagTable.flags) {
    if (!f.credential) {
      v[f.field] = f.kind === 'bool' ? false : f.declared;
    }
  }

  return reactive(v);
}

export const importedCredential = { id: 'cattle-global-data:cc-1', annotations: { 'hcivm.cattle.io/clusterId': CLUSTER_ID } };

export async function mountForm({ credential = importedCredential, value = newConfig(), quantity = 1, responses } = {}) {
  const { store, calls } = fakeStore({ credential, responses });
  const events = [];
  const wrapper = mount(MachineConfig, {
    props: {
      value,
      mode:         'create',
      credentialId: credential ? credential.id : '',
      cluster:      { metadata: { name: 'mycluster' } },
      poolIndex:    0,
      machinePools: [{ pool: { quantity } }],
    },
    global: { mocks: { $store: store } },
    attrs:  { onValidationChanged: (v) => events.push(v) },
  });

  for (let i = 0; i < 5; i++) {
    await flush();
  }

  return { wrapper, value, calls, events };
}
