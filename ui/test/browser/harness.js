// The fake Rancher around the form in the browser check: window.hcivmStart(component) mounts a machine-config
// component with a new HcivmConfig and a fake store answering Rancher's requests from
// ui/test/fixtures/harvester.json. It takes Vue from window.Vue: the built extension (a UMD) uses that one too.
// window.hcivm exposes the machine config the form writes and its validationChanged events.
import flagTable from '../../pkg/hcivm/flags.json';
import harvester from '../fixtures/harvester.json';

const PREFIX = '/k8s/clusters/c-m-abc12/v1';

window.hcivmStart = (component) => {
  const { createApp, reactive } = window.Vue;
  const value = reactive({});

  for (const f of flagTable.flags) {
    if (!f.credential) {
      value[f.field] = f.kind === 'bool' ? false : f.declared;
    }
  }
  const store = {
    getters:  {},
    dispatch: async(action, arg) => {
      if (action === 'rancher/find') {
        return { id: arg.id, annotations: { 'hcivm.cattle.io/clusterId': 'c-m-abc12' } };
      }
      const path = arg.url.startsWith(PREFIX) ? arg.url.slice(PREFIX.length) : arg.url;

      if (action === 'cluster/request' && path in harvester.responses) {
        return harvester.responses[path];
      }
      throw new Error(`404 ${ arg.url }`);
    },
  };
  const valid = [];
  const app = createApp(component, {
    value,
    mode:                'create',
    credentialId:        'cattle-global-data:cc-1',
    cluster:             { metadata: { name: 'mycluster' } },
    poolIndex:           0,
    machinePools:        [{ pool: { quantity: 1 } }],
    onValidationChanged: (v) => valid.push(v),
  });

  app.config.globalProperties.$store = store;
  app.mount('#app');
  window.hcivm = { value, valid };
};
