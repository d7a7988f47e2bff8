// Harvester's Kubernetes API as Rancher's proxy passes it through (/k8s/clusters/<id>/api/… and /apis/…: rancher/
// rancher pkg/multiclustermanager/routes.go, the k8sProxy, which acts as the user), for the objects the credential
// form makes: ServiceAccounts, Secrets, ConfigMaps, Roles, RoleBindings, ClusterRoles, ClusterRoleBindings.
//
// It answers as kube-apiserver does: a create gets the object back with uid, resourceVersion and
// creationTimestamp; a name taken is 409 AlreadyExists, an object or namespace not there 404 NotFound, an update
// of another resourceVersion or a delete whose precondition's uid differs 409 Conflict, a refused verb 403
// Forbidden, each a Status with its message worded as k8s.io/apimachinery pkg/api/errors words it
// (NewAlreadyExists, NewNotFound, NewConflict, NewForbidden). Rancher's store resolves with the body and rejects with
// it, the HTTP status as _status (@rancher/shell plugins/steve/actions.js responseObject, onError).
//
// kube-controller-manager's tokens controller fills a Secret of type kubernetes.io/service-account-token whose
// ServiceAccount exists: data.token, data['ca.crt'] and data.namespace, and the account's uid annotation
// (kubernetes pkg/controller/serviceaccount/tokens_controller.go). Here it has done so by the fillAfter-th read.
const CORE = 'api/v1';
const RBAC = 'apis/rbac.authorization.k8s.io/v1';
const GROUP = { [CORE]: '', [RBAC]: 'rbac.authorization.k8s.io' };

export const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhya2UyLXNl\n-----END CERTIFICATE-----\n';
export const TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImhjaXZtIn0.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl';

// tokenOf is the token of the token Secret of that uid: each Secret's token is its own.
export const tokenOf = (uid) => `${ TOKEN }${ uid.replace(/[^a-z0-9]/g, '') }`;

const b64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

function answer(body, status) {
  Object.defineProperty(body, '_status', { value: status });

  return body;
}

function status(code, reason, message, details = {}) {
  return answer({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code
  }, code);
}

// parse splits a path under the cluster into its API, namespace, resource and name.
function parse(path) {
  const m = path.match(/^(api\/v1|apis\/rbac\.authorization\.k8s\.io\/v1)\/(?:namespaces\/([^/]+)\/)?([^/?]+)(?:\/([^/?]+))?$/);

  return m ? {
    api: m[1], namespace: m[2] || '', resource: m[3], name: m[4] || ''
  } : null;
}

// kubeApi is the fake API of one Harvester cluster. namespaces exist; objects are there from the start
// ({path: object}, path of the object); forbidden lists "verb resource" the user may not; user names the user in
// a refusal.
export function kubeApi({
  namespaces = ['default', 'vms', 'harvester-system'], objects = {}, forbidden = [], user = 'u-abc12', fillAfter = 1,
} = {}) {
  const store = new Map(Object.entries(JSON.parse(JSON.stringify(objects))));
  const reads = new Map();
  let version = 100;
  let uids = 0;

  const qualified = (p) => (GROUP[p.api] ? `${ p.resource }.${ GROUP[p.api] }` : p.resource);
  const key = (p, name) => `${ p.api }/${ p.namespace ? `namespaces/${ p.namespace }/` : '' }${ p.resource }/${ name }`;
  const notFound = (p, name) => status(404, 'NotFound', `${ qualified(p) } "${ name }" not found`, { name, group: GROUP[p.api], kind: p.resource });

  function fillToken(k, secret) {
    const n = (reads.get(k) || 0) + 1;

    reads.set(k, n);
    const saName = secret.metadata.annotations?.['kubernetes.io/service-account.name'];
    const sa = store.get(`${ CORE }/namespaces/${ secret.metadata.namespace }/serviceaccounts/${ saName }`);

    if (secret.type !== 'kubernetes.io/service-account-token' || !sa || n < fillAfter || secret.data?.token) {
      return;
    }
    secret.data = { 'ca.crt': b64(CA_PEM), namespace: b64(secret.metadata.namespace), token: b64(tokenOf(secret.metadata.uid)) };
    secret.metadata.annotations['kubernetes.io/service-account.uid'] = sa.metadata.uid;
    secret.metadata.resourceVersion = String(++version);
  }

  async function request({ method = 'get', path, data }) {
    const p = parse(path);
    const verb = method.toLowerCase();

    if (!p || (verb === 'post' && p.name)) {
      throw status(404, 'NotFound', 'the server could not find the requested resource');
    }
    const kubeVerb = { post: 'create', put: 'update', get: 'get', delete: 'delete' }[verb];

    if (forbidden.includes(`${ kubeVerb } ${ p.resource }`)) {
      const scope = p.namespace ? `in the namespace "${ p.namespace }"` : 'at the cluster scope';

      throw status(403, 'Forbidden', `${ qualified(p) }${ p.name ? ` "${ p.name }"` : '' } is forbidden: User "${ user }" cannot ${ kubeVerb } resource "${ p.resource }" in API group "${ GROUP[p.api] }" ${ scope }`, { name: p.name, group: GROUP[p.api], kind: p.resource });
    }
    if (p.namespace && !namespaces.includes(p.namespace)) {
      throw status(404, 'NotFound', `namespaces "${ p.namespace }" not found`, { name: p.namespace, kind: 'namespaces' });
    }
    if (verb === 'post' && !p.name) {
      const name = data?.metadata?.name;
      const k = key(p, name);

      if (store.has(k)) {
        throw status(409, 'AlreadyExists', `${ qualified(p) } "${ name }" already exists`, { name, group: GROUP[p.api], kind: p.resource });
      }
      const obj = JSON.parse(JSON.stringify(data));

      obj.metadata = {
        ...obj.metadata, uid: `uid-${ ++uids }`, resourceVersion: String(++version), creationTimestamp: '2026-12-02T03:00:00Z'
      };
      store.set(k, obj);

      return answer(JSON.parse(JSON.stringify(obj)), 201);
    }
    const k = key(p, p.name);
    const got = store.get(k);

    if (!got) {
      throw notFound(p, p.name);
    }
    if (verb === 'get') {
      fillToken(k, got);

      return answer(JSON.parse(JSON.stringify(got)), 200);
    }
    if (verb === 'put') {
      if (data?.metadata?.resourceVersion !== got.metadata.resourceVersion) {
        throw status(409, 'Conflict', `Operation cannot be fulfilled on ${ qualified(p) } "${ p.name }": the object has been modified; please apply your changes to the latest version and try again`, { name: p.name, group: GROUP[p.api], kind: p.resource });
      }
      const obj = JSON.parse(JSON.stringify(data));

      obj.metadata.resourceVersion = String(++version);
      store.set(k, obj);

      return answer(JSON.parse(JSON.stringify(obj)), 200);
    }
    if (verb === 'delete') {
      const uid = data?.preconditions?.uid;

      if (uid && uid !== got.metadata.uid) {
        throw status(409, 'Conflict', `Operation cannot be fulfilled on ${ qualified(p) } "${ p.name }": Precondition failed: UID in precondition: ${ uid }, UID in object meta: ${ got.metadata.uid }`, { name: p.name, group: GROUP[p.api], kind: p.resource });
      }
      store.delete(k);

      return answer({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: p.name, group: GROUP[p.api], kind: p.resource, uid: got.metadata.uid }
      }, 200);
    }

    throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  return {
    request,
    // objects: what the cluster holds now, {path: object}.
    objects: () => Object.fromEntries([...store].map(([k, v]) => [k, JSON.parse(JSON.stringify(v))])),
  };
}

// harvesterVip is Harvester's vip ConfigMap in harvester-system: data.ip is the cluster's virtual IP (harvester/
// harvester pkg/controller/master/rancher VIPConfig: enabled, serviceType, ip, mode, hwAddress, loadBalancerIP).
export function harvesterVip(ip = '10.0.0.5') {
  return {
    [`${ CORE }/namespaces/harvester-system/configmaps/vip`]: {
      apiVersion: 'v1',
      kind:       'ConfigMap',
      metadata:   {
        name: 'vip', namespace: 'harvester-system', uid: 'uid-vip', resourceVersion: '7'
      },
      data: {
        enabled: 'true', serviceType: 'LoadBalancer', ip, mode: 'static', hwAddress: '', loadBalancerIP: ip
      },
    },
  };
}
