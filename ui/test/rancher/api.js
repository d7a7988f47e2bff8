// The dashboard stores the forms talk to, answering as Rancher's API does from fixtures:
// - rancher/find cloudcredential: the credential as GET /v3/cloudcredentials/<id> returns it (fixtures/rancher.js),
//   made the dashboard's CloudCredential model (@rancher/shell models/cloudcredential.js: decodedData, setData);
// - management/findAll management.cattle.io.cluster: Rancher's clusters;
// - management/request POST /k8s/clusters/<id>/v1/harvester/kubeconfig: Harvester's kubeconfig endpoint for a
//   service account, as rke2.vue setHarvesterChartValues calls it; management/create a Secret with save();
// - cluster/request: Harvester's Steve API through Rancher's proxy (fixtures/harvester.json, by path under
//   /k8s/clusters/<id>/v1; a path it does not hold is a 404, as Steve answers for a type it does not serve).
// Every request is recorded in calls.
import { reactive } from 'vue';
import CloudCredential from '@shell/models/cloudcredential';
import harvester from '../fixtures/harvester.json';

export function rancherApi(fixtures, calls) {
  const responses = fixtures.harvester || harvester.responses;
  const credentials = Object.fromEntries((fixtures.credentials || []).map((c) => [c.id, c]));
  let store;
  const ctx = () => ({
    getters:     store.getters,
    rootGetters: store.getters,
    dispatch:    store.dispatch,
    rootState:   store.state,
  });
  const record = (action, arg) => calls.push({ action, arg });
  const notFound = (what) => Object.assign(new Error(`404 Not Found: ${ what }`), { _status: 404 });

  return {
    bind(s) {
      store = s;
    },
    rancher: {
      namespaced: true,
      getters:    { byId: () => (type, id) => (credentials[id] ? credential(credentials[id], ctx()) : undefined) },
      actions:    {
        async find(_, arg) {
          record('rancher/find', arg);
          if (arg.type !== 'cloudcredential' || !credentials[arg.id]) {
            throw notFound(`${ arg.type } ${ arg.id }`);
          }

          return credential(credentials[arg.id], ctx());
        },
      },
    },
    management: {
      namespaced: true,
      actions:    {
        async findAll(_, arg) {
          record('management/findAll', arg);
          if (arg.type === 'management.cattle.io.cluster') {
            return fixtures.clusters || [];
          }
          throw notFound(arg.type);
        },
        async request(_, arg) {
          record('management/request', arg);
          if (arg.method === 'POST' && /^\/k8s\/clusters\/[^/]+\/v1\/harvester\/kubeconfig$/.test(arg.url)) {
            return { data: `apiVersion: v1\nkind: Config\n# service account ${ arg.data.serviceAccountName } in ${ arg.data.namespace }\n` };
          }
          throw notFound(arg.url);
        },
        async create(_, obj) {
          record('management/create', obj);

          return { ...obj, save: async(opt) => ({ ...obj, metadata: { ...obj.metadata, name: `${ obj.metadata.generateName }abcde` }, saved: opt }) };
        },
      },
    },
    cluster: {
      namespaced: true,
      actions:    {
        async request(_, arg) {
          record('cluster/request', arg);
          const path = arg.url.replace(/^\/k8s\/clusters\/[^/]+\/v1/, '');

          if (!(path in responses)) {
            throw notFound(arg.url);
          }

          return JSON.parse(JSON.stringify(responses[path]));
        },
      },
    },
  };
}

export function credential(data, ctx) {
  return reactive(new CloudCredential(JSON.parse(JSON.stringify(data)), ctx));
}
