// A fake $store as Rancher's forms use it: dispatch answers by action and, for requests, by URL from fixtures;
// every call is recorded.
import harvester from '../fixtures/harvester.json';

export const CLUSTER_ID = 'c-m-abc12';
export const PREFIX = `/k8s/clusters/${ CLUSTER_ID }/v1`;

export function fakeStore({ credential, responses = harvester.responses, clusters = [] } = {}) {
  const calls = [];
  const dispatch = async(action, arg) => {
    calls.push({ action, arg });
    if (action === 'rancher/find') {
      return credential;
    }
    if (action === 'management/findAll') {
      return clusters;
    }
    if (action === 'cluster/request') {
      const path = arg.url.startsWith(PREFIX) ? arg.url.slice(PREFIX.length) : arg.url;

      if (!(path in responses)) {
        throw Object.assign(new Error(`404 ${ arg.url }`), { _status: 404 });
      }

      return responses[path];
    }
    throw new Error(`unexpected action ${ action }`);
  };

  return { calls, store: { dispatch, getters: {} } };
}

export const flush = () => new Promise((r) => setTimeout(r, 0));
