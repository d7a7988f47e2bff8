// The driver's own account in Harvester, which the credential form makes for a credential of an imported
// Harvester cluster: a ServiceAccount, a token Secret of kind kubernetes.io/service-account-token (its token does
// not expire; it stops working when the Secret or the account is deleted), Roles and RoleBindings in the
// namespaces the admin chooses, and a ClusterRole and ClusterRoleBinding, all with the driver's least-privilege
// rules: the permission table the driver prints (flags --json, flags.json, harvester/permissions.go), the needs of
// the options the admin allows. The credential's kubeconfig is that token at Harvester's own API address, which
// Rancher's provisioning jobs must reach.
//
// Why not the kubeconfig Rancher makes (management cluster generateKubeconfig, what Rancher's own Harvester
// credential holds): its token is a Rancher token that expires after kubeconfig-default-token-ttl-minutes (30
// days), and Rancher makes it last only for its own driver's credentials (rancher/rancher
// pkg/controllers/management/cloudcredential/controller.go syncHarvesterToken reads
// harvestercredentialConfig-kubeconfigContent only); a Rancher API token is capped by auth-token-max-ttl-minutes
// (90 days, pkg/settings/setting.go). docs/ui-extension.md says more.
//
// This file builds the objects (pure: names and rules in, objects out); account-api.js sends them.
import jsyaml from 'js-yaml';
import flagTable from '../flags.json';

// ACCOUNT_LABEL marks every object the form makes with the account's name: what it may change, and what the
// removal commands select.
export const ACCOUNT_LABEL = 'hcivm.cattle.io/credential-account';
// ACCOUNT_ANNOTATION keeps, on the credential, what the form made (a public annotation: Rancher's API returns it).
export const ACCOUNT_ANNOTATION = 'hcivm.cattle.io/harvester-account';
const TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const RBAC = 'rbac.authorization.k8s.io';
const OPTIONAL_READ = ' (read; check skipped without)'; // harvester/permissions.go OptionalRead

// OPTIONS are the needs of the table that only some pools have (a need with flags that is more than a read), by
// the form field of its first flag: what the admin allows the credential besides what every machine needs.
const FIELD_OF_FLAG = Object.fromEntries(flagTable.flags.map((f) => [f.flag, f.field]));

export const OPTIONS = flagTable.permissions.filter((n) => (n.flags || []).length && !n.when.endsWith(OPTIONAL_READ))
  .map((n) => FIELD_OF_FLAG[n.flags[0]] || n.flags[0]);

function optionOf(need) {
  return (need.flags || []).length && !need.when.endsWith(OPTIONAL_READ) ? FIELD_OF_FLAG[need.flags[0]] || need.flags[0] : '';
}

// needsFor are the table's needs an account with options gets: every machine's, the reads the pre-flight makes,
// and the needs of the options allowed.
export function needsFor(options, permissions = flagTable.permissions) {
  return permissions.filter((n) => !optionOf(n) || options.includes(optionOf(n)));
}

// rulesFor gathers needs into RBAC rules by place: namespaced (in every chosen namespace: the VM namespace and
// the namespaces of the images, networks and key pairs, as each need's "where" says), fixed ({namespace: rules},
// an access that names its namespace) and cluster (cluster-scoped access). One rule per API group, resource and
// name, with its verbs in the table's order; rules sorted, so the same needs give the same rules.
export function rulesFor(needs) {
  const places = { namespaced: new Map(), fixed: {}, cluster: new Map() };

  for (const need of needs) {
    for (const a of need.access) {
      let map = places.namespaced;

      if (a.clusterScoped) {
        map = places.cluster;
      } else if (a.namespace) {
        map = places.fixed[a.namespace] = places.fixed[a.namespace] || new Map();
      }
      const key = `${ a.group || '' }|${ a.resource }|${ a.name || '' }`;
      const rule = map.get(key) || { group: a.group || '', resource: a.resource, name: a.name || '', verbs: [] };

      if (!rule.verbs.includes(a.verb)) {
        rule.verbs.push(a.verb);
      }
      map.set(key, rule);
    }
  }
  const asRules = (map) => [...map.values()].sort((x, y) => `${ x.group }|${ x.resource }|${ x.name }`.localeCompare(`${ y.group }|${ y.resource }|${ y.name }`))
    .map((r) => ({
      apiGroups: [r.group], resources: [r.resource], ...(r.name ? { resourceNames: [r.name] } : {}), verbs: r.verbs
    }));

  return {
    namespaced: asRules(places.namespaced),
    fixed:      Object.fromEntries(Object.entries(places.fixed).sort().map(([ns, m]) => [ns, asRules(m)])),
    cluster:    asRules(places.cluster),
  };
}

const meta = (name, namespace, labels) => ({ name, ...(namespace ? { namespace } : {}), labels: { ...labels } });

// accountObjects are the objects of account {name, namespace (the ServiceAccount's), namespaces, options}, each
// {path, body}: path is the collection's path under the cluster's API (api/v1/…, apis/rbac…/v1/…), body the object
// to create. The token Secret is made after the ServiceAccount (it is the account's: tokenSecret).
export function accountObjects(account) {
  const { name, namespace } = account;
  const labels = { [ACCOUNT_LABEL]: name };
  const rules = rulesFor(needsFor(account.options || []));
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  const out = [{
    path: `api/v1/namespaces/${ namespace }/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, namespace, labels) },
  }];
  const role = (ns, roleRules) => {
    out.push({
      path: `apis/${ RBAC }/v1/namespaces/${ ns }/roles`,
      body: {
        apiVersion: `${ RBAC }/v1`, kind: 'Role', metadata: meta(name, ns, labels), rules: roleRules
      },
    }, {
      path: `apis/${ RBAC }/v1/namespaces/${ ns }/rolebindings`,
      body: {
        apiVersion: `${ RBAC }/v1`, kind: 'RoleBinding', metadata: meta(name, ns, labels), subjects, roleRef: { apiGroup: RBAC, kind: 'Role', name }
      },
    });
  };

  for (const ns of account.namespaces) {
    role(ns, rules.namespaced);
  }
  for (const [ns, roleRules] of Object.entries(rules.fixed)) {
    if (!account.namespaces.includes(ns)) {
      role(ns, roleRules);
    }
  }
  out.push({
    path: `apis/${ RBAC }/v1/clusterroles`,
    body: {
      apiVersion: `${ RBAC }/v1`, kind: 'ClusterRole', metadata: meta(name, '', labels), rules: rules.cluster
    },
  }, {
    path: `apis/${ RBAC }/v1/clusterrolebindings`,
    body: {
      apiVersion: `${ RBAC }/v1`, kind: 'ClusterRoleBinding', metadata: meta(name, '', labels), subjects, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name }
    },
  });

  return out;
}

export function tokenSecretName(name) {
  return `${ name }-token`;
}

// tokenSecret is the account's token Secret, owned by its ServiceAccount (sa: the ServiceAccount as created, for
// its uid), so that deleting the account deletes it.
export function tokenSecret(account, sa) {
  const { name, namespace } = account;

  return {
    path: `api/v1/namespaces/${ namespace }/secrets`,
    body: {
      apiVersion: 'v1',
      kind:       'Secret',
      type:       TOKEN_SECRET_TYPE,
      metadata:   {
        ...meta(tokenSecretName(name), namespace, { [ACCOUNT_LABEL]: name }),
        annotations:     { [SA_NAME_ANNOTATION]: name },
        ownerReferences: [{
          apiVersion: 'v1', kind: 'ServiceAccount', name, uid: sa.metadata.uid
        }],
      },
    },
  };
}

// isTokenOf is whether a Secret read back is the account's token Secret.
export function isTokenOf(secret, name) {
  return secret?.type === TOKEN_SECRET_TYPE && secret?.metadata?.annotations?.[SA_NAME_ANNOTATION] === name;
}

// kubeconfig is the credential's kubeconfig: the account's token at Harvester's address, Harvester's CA (as the
// token Secret's ca.crt holds it, base64), the account's namespace as the context's, names as Harvester's own
// kubeconfig endpoint writes them (harvester/harvester pkg/api/kubeconfig/generate_handler.go generateKubeConfig).
export function kubeconfig({ server, caData, token, namespace }) {
  return jsyaml.dump({
    apiVersion:        'v1',
    kind:              'Config',
    clusters:          [{ name: 'default', cluster: { server, 'certificate-authority-data': caData } }],
    users:             [{ name: 'default', user: { token } }],
    contexts:          [{ name: 'default', context: { cluster: 'default', user: 'default', namespace } }],
    'current-context': 'default',
  }, { lineWidth: -1 });
}

// removalCommands are the commands that remove what the form made for the account, with Harvester's kubeconfig.
export function removalCommands(name) {
  const selector = `${ ACCOUNT_LABEL }=${ name }`;

  return [
    `kubectl delete clusterrolebinding,clusterrole -l ${ selector }`,
    `kubectl delete --all-namespaces rolebinding,role,secret,serviceaccount -l ${ selector }`,
  ];
}

/**
 * An account the form made, as the credential's annotation records it.
 * @typedef {{name: string, namespace: string, namespaces: string[], options: string[], server: string}} Account
 */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MAX_ANNOTATION = 4096;

// readAnnotation is what the credential's annotation says the form made, or null when it holds nothing usable
// (a credential made otherwise, or an annotation edited by hand: every name is checked, the size bounded).
/** @returns {Account | null} */
export function readAnnotation(credential) {
  const text = credential?.annotations?.[ACCOUNT_ANNOTATION];

  if (!text || text.length > MAX_ANNOTATION) {
    return null;
  }
  let a;

  try {
    a = JSON.parse(text);
  } catch (e) {
    return null;
  }
  const names = (v) => Array.isArray(v) && v.length <= 64 && v.every((x) => typeof x === 'string' && DNS_LABEL.test(x));

  if (!a || typeof a !== 'object' || !DNS_LABEL.test(a.name || '') || !DNS_LABEL.test(a.namespace || '') || !names(a.namespaces) ||
      !Array.isArray(a.options) || !a.options.every((o) => OPTIONS.includes(o)) || (a.server && serverProblem(a.server))) {
    return null;
  }

  return {
    name: a.name, namespace: a.namespace, namespaces: [...a.namespaces], options: [...a.options], server: typeof a.server === 'string' ? a.server : '',
  };
}

export function writeAnnotation(account) {
  return JSON.stringify({
    name: account.name, namespace: account.namespace, namespaces: account.namespaces, options: account.options, server: account.server,
  });
}

const sameList = (a, b) => [...a].sort().join(',') === [...b].sort().join(',');

// accountChanged is whether the form's settings ({namespaces, options, server}) differ from the account the
// credential has (null: it has none).
/**
 * @param {Account | null} account
 * @param {{namespaces: string[], options: string[], server: string}} settings
 * @returns {boolean}
 */
export function accountChanged(account, settings) {
  return !account || !sameList(account.namespaces, settings.namespaces) || !sameList(account.options, settings.options) ||
    account.server !== settings.server.trim();
}

// serverProblem is what is wrong with Harvester's API address as the admin gave it, as an l10n key of
// hcivm.credential.account.errors, or '': an https URL of a host and an optional port, nothing after; not a
// Rancher proxy URL, whose path the token of a Harvester account means nothing to.
export function serverProblem(server) {
  const s = (server || '').trim();

  if (!s) {
    return 'serverRequired';
  }
  let u;

  try {
    u = new URL(s);
  } catch (e) {
    return 'serverFormat';
  }
  if (u.protocol !== 'https:' || !u.hostname || u.username || u.password || (u.pathname && u.pathname !== '/') || u.search || u.hash || s.length > 270) {
    return 'serverFormat';
  }

  return '';
}
