// The dashboard stores the forms talk to, answering as Rancher's API does from fixtures:
// - rancher/find cloudcredential: the credential as GET /v3/cloudcredentials/<id> returns it (fixtures/rancher.js),
//   made the dashboard's CloudCredential model (@rancher/shell models/cloudcredential.js: decodedData, setData);
// - management/findAll management.cattle.io.cluster: Rancher's clusters;
// - management/request POST /k8s/clusters/<id>/v1/harvester/kubeconfig: Harvester's kubeconfig endpoint for a
//   service account, as rke2.vue setHarvesterChartValues calls it; management/create a Secret with save();
// - management/request /k8s/clusters/<id>/api/… and /apis/…: Harvester's Kubernetes API through Rancher's proxy
//   (kube.js, one per store: fixtures.kube, or a Harvester with its vip ConfigMap);
// - management/request /v1-rke2-release/releases and /v1-k3s-release/releases: the releases Rancher's channel
//   server answers for the Rancher line under test (fixtures/rancher.js releases, globalThis.RANCHER_LINE);
// - a pool's machine config: management/find and management/request /v1/<type>s/<id> (fixtures.configs, by id, as
//   Rancher's API returns them), management/clone and management/create making the dashboard's model of it
//   (configModel: its toJSON a deep copy, as @rancher/shell plugins/dashboard-store/resource-class.js toJSON;
//   save() records the body it would send), management/cleanForDiff (cleanForDiff below);
// - cluster/request: Harvester's Steve API through Rancher's proxy (fixtures/harvester.json, by path under
//   /k8s/clusters/<id>/v1; a path it does not hold is a 404, as Steve answers for a type it does not serve).
// Every request is recorded in calls.
import { reactive } from 'vue';
import CloudCredential from '@shell/models/cloudcredential';
import harvester from '../fixtures/harvester.json';
import { releases, RANCHER_VERSION } from '../fixtures/rancher';
import { harvesterVip, kubeApi } from './kube';

const line = () => globalThis.RANCHER_LINE || '2.13';
const copy = (v) => JSON.parse(JSON.stringify(v));

// configModel is the dashboard's model of a machine config as far as rke2.vue uses it: the data, toJSON, save.
export function configModel(data, calls) {
  const m = copy(data);

  Object.defineProperty(m, 'toJSON', { value: () => copy(Object.fromEntries(Object.keys(m).map((k) => [k, m[k]]))) });
  Object.defineProperty(m, 'save', {
    value: async() => {
      const body = JSON.stringify(m);

      calls.push({ action: 'save', arg: { id: m.id || '', body } });

      return configModel(JSON.parse(body), calls);
    },
  });

  return m;
}

// cleanForDiff is what @rancher/shell plugins/steve/actions.js cleanForDiff leaves of an object to compare: no
// keys starting with _, no links, actions, or metadata the server keeps (resourceVersion, uid, timestamps, managed
// fields, generation), labels and annotations present.
function cleanForDiff(obj) {
  const out = copy(obj);
  const m = out.metadata || {};

  m.labels = m.labels || {};
  m.annotations = m.annotations || {};
  for (const k of Object.keys(out)) {
    if (k.startsWith('_') || ['links', 'actions', 'status', 'stateDescription', 'stateObj'].includes(k)) {
      delete out[k];
    }
  }
  for (const k of ['creationTimestamp', 'deletionTimestamp', 'generation', 'managedFields', 'resourceVersion', 'selfLink', 'uid', 'state', 'fields', 'relationships']) {
    delete m[k];
  }

  return out;
}

export function rancherApi(fixtures, calls) {
  const responses = fixtures.harvester || harvester.responses;
  const kube = fixtures.kube || kubeApi({ objects: harvesterVip() });
  const configs = Object.fromEntries((fixtures.configs || []).map((c) => [c.id, c]));
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
      getters:    { canList: () => () => true },
      actions:    {
        async find(_, arg) {
          record('management/find', arg);
          if (!configs[arg.id]) {
            throw notFound(`${ arg.type } ${ arg.id }`);
          }

          return configModel(configs[arg.id], calls);
        },
        async clone(_, { resource }) {
          return configModel(resource.toJSON(), calls);
        },
        async cleanForDiff(_, obj) {
          return cleanForDiff(obj);
        },
        async findAll(_, arg) {
          record('management/findAll', arg);
          if (arg.type === 'management.cattle.io.cluster') {
            return fixtures.clusters || [];
          }
          throw notFound(arg.type);
        },
        async request(_, arg) {
          record('management/request', arg);
          const raw = arg.url.match(/^\/k8s\/clusters\/[^/]+\/(apis?\/.*)$/);

          if (raw) {
            return kube.request({ method: arg.method || 'get', path: raw[1], data: arg.data });
          }
          if (arg.method === 'POST' && /^\/k8s\/clusters\/[^/]+\/v1\/harvester\/kubeconfig$/.test(arg.url)) {
            return { data: `apiVersion: v1\nkind: Config\n# service account ${ arg.data.serviceAccountName } in ${ arg.data.namespace }\n` };
          }
          const release = arg.url.match(/^\/v1-(rke2|k3s)-release\/releases$/);

          if (release) {
            return { type: 'collection', data: releases(release[1], RANCHER_VERSION[line()]) };
          }
          const config = arg.url.match(/^\/v1\/rke-machine-config\.cattle\.io\.[a-z]+configs\/(.+)$/);

          if (config && configs[config[1]]) {
            return copy(configs[config[1]]);
          }
          throw notFound(arg.url);
        },
        async create(_, obj) {
          record('management/create', obj);
          if (obj.type !== 'secret') {
            return configModel(obj, calls);
          }

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
