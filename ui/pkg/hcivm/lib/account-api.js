// Sends the driver's account (account.js) to Harvester with the admin's own Rancher session, through Rancher's
// proxy to the imported cluster's Kubernetes API: /k8s/clusters/<id>/… (rancher/rancher
// pkg/multiclustermanager/routes.go, the k8sProxy of "/k8s/clusters/{clusterID}/", which acts as the user in the
// cluster: the route a kubeconfig made by Rancher points at). The store's request action answers with the API
// server's body, and rejects with it (a Status) and its HTTP status as _status (@rancher/shell
// plugins/steve/actions.js request, responseObject and onError).
//
// Idempotent: an object of the account's name that is there already is used when it carries the account's label,
// brought back to its rules when they differ, and refused otherwise. Nothing but the account's own objects is
// changed or deleted.
import { proxyUrl } from './harvester';
import { sameJSON } from './lists';
import {
  ACCOUNT_LABEL, accountObjects, isTokenOf, kubeconfig, tokenSecret, tokenSecretName
} from './account';

const VIP_CONFIGMAP = 'api/v1/namespaces/harvester-system/configmaps/vip'; // data.ip, as Harvester's own endpoint reads it
const HARVESTER_API_PORT = '6443';
const MAX_TOKEN = 16384; // base64 characters: a service account token is a JWT of about a kilobyte
const MAX_CA = 65536;
const MAX_MESSAGE = 500;

export const TOKEN_TRIES = 30; // one a second: what the driver's own account waits (guestaccount tokenWaitTimeout)

// timing.wait paces the wait for the token (tests make it instant).
export const timing = { wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

// AccountError is a failed step: key is its l10n key under hcivm.credential.account.errors, args its arguments.
export class AccountError extends Error {
  constructor(key, args) {
    super(key);
    this.key = key;
    this.args = args;
  }
}

const statusOf = (e) => e?._status || e?.code || 0;

// messageOf is what Harvester or Rancher said of a refused request, bounded.
export function messageOf(e) {
  const m = String(e?.message || e?.reason || e?._statusText || e || '').replace(/\s+/g, ' ').trim();

  return m.length > MAX_MESSAGE ? `${ m.slice(0, MAX_MESSAGE) }…` : m;
}

function refused(action, what, e) {
  const status = statusOf(e);

  return new AccountError(status === 403 ? 'forbidden' : 'request', { action, what, message: messageOf(e) || String(status) });
}

function client(dispatch, clusterId) {
  const base = `/k8s/clusters/${ clusterId }`;

  return (method, path, data) => dispatch('management/request', {
    method, url: `${ base }/${ path }`, ...(data ? { data } : {}), redirectUnauthorized: false
  });
}

// labelled is whether an object read back carries the account's label: made by the form for this account.
const labelled = (name) => (got) => got?.metadata?.labels?.[ACCOUNT_LABEL] === name;

const whatOf = (body) => `${ body.kind } ${ body.metadata.namespace ? `${ body.metadata.namespace }/` : '' }${ body.metadata.name }`;

// ensureOne creates {path, body}, or, when it exists, reads it and makes it what body says (rules, subjects), if
// it is the account's; check refuses an object that is the account's by label but not of its kind.
async function ensureOne(req, { path, body }, name, check = () => true) {
  const what = whatOf(body);

  try {
    return await req('post', path, body);
  } catch (e) {
    // 409 AlreadyExists (k8s.io/apimachinery pkg/api/errors NewAlreadyExists); another 409 is a conflict.
    if (statusOf(e) !== 409 || (e?.reason && e.reason !== 'AlreadyExists')) {
      throw refused('create', what, e);
    }
  }
  let got;

  try {
    got = await req('get', `${ path }/${ body.metadata.name }`);
  } catch (e) {
    throw refused('read', what, e);
  }
  if (!labelled(name)(got) || !check(got)) {
    throw new AccountError('notOurs', { what, label: `${ ACCOUNT_LABEL }=${ name }` });
  }
  if (body.roleRef && !sameJSON(got.roleRef, body.roleRef)) {
    throw new AccountError('notOurs', { what, label: `${ ACCOUNT_LABEL }=${ name }` });
  }
  const changed = ['rules', 'subjects'].filter((k) => body[k] && !sameJSON(got[k], body[k]));

  if (!changed.length) {
    return got;
  }
  try {
    return await req('put', `${ path }/${ body.metadata.name }`, { ...got, ...Object.fromEntries(changed.map((k) => [k, body[k]])) });
  } catch (e) {
    throw refused('update', what, e);
  }
}

// deleteOurs deletes the object at path if ours(got) says it is the account's, and answers whether it was (an
// object not there counts as deleted). The delete names the UID read, so an object made since in its place is left
// alone.
async function deleteOurs(req, path, what, ours) {
  let got;

  try {
    got = await req('get', path);
  } catch (e) {
    if (statusOf(e) === 404) {
      return true;
    }
    throw refused('read', what, e);
  }
  if (!ours(got)) {
    return false;
  }
  try {
    await req('delete', path, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: got.metadata.uid } });
  } catch (e) {
    if (statusOf(e) !== 404) {
      throw refused('delete', what, e);
    }
  }

  return true;
}

// dropNamespace deletes the account's Role and RoleBinding from a namespace no longer chosen, when they carry its
// label.
async function dropNamespace(req, name, ns) {
  for (const kind of ['RoleBinding', 'Role']) {
    await deleteOurs(req, `apis/rbac.authorization.k8s.io/v1/namespaces/${ ns }/${ kind.toLowerCase() }s/${ name }`, `${ kind } ${ ns }/${ name }`, labelled(name));
  }
}

// filledToken is the token and CA of a token Secret kube-controller-manager has filled in, checked and bounded,
// or null while it has not.
function filledToken(secret) {
  const token = secret?.data?.token;
  const ca = secret?.data?.['ca.crt'];

  if (!token || !ca) {
    return null;
  }
  const unusable = new AccountError('tokenUnusable', { what: `${ secret.metadata?.namespace }/${ secret.metadata?.name }` });

  if (token.length > MAX_TOKEN || ca.length > MAX_CA) {
    throw unusable;
  }
  try {
    return { token: atob(token), caData: ca.replace(/\s/g, '') };
  } catch (e) {
    throw unusable;
  }
}

async function waitForToken(req, account, wait, tries) {
  const path = `api/v1/namespaces/${ account.namespace }/secrets/${ tokenSecretName(account.name) }`;
  const name = `${ account.namespace }/${ tokenSecretName(account.name) }`;

  for (let i = 0; i < tries; i++) {
    let secret;

    try {
      secret = await req('get', path);
    } catch (e) {
      throw refused('read', `Secret ${ name }`, e);
    }
    const filled = filledToken(secret);

    if (filled) {
      return filled;
    }
    await wait(1000);
  }
  throw new AccountError('tokenTimeout', { what: name, seconds: tries });
}

// dropToken deletes the account's token Secret, so that the next one carries a new token (the old one stops
// working at once); a Secret of its name that is not the account's token is refused.
async function dropToken(req, account) {
  const name = tokenSecretName(account.name);
  const what = `Secret ${ account.namespace }/${ name }`;
  const ours = (got) => labelled(account.name)(got) && isTokenOf(got, account.name);

  if (!await deleteOurs(req, `api/v1/namespaces/${ account.namespace }/secrets/${ name }`, what, ours)) {
    throw new AccountError('notOurs', { what, label: `${ ACCOUNT_LABEL }=${ account.name }` });
  }
}

// ensureAccount makes (or brings back) the account {name, namespace, namespaces, options, server} in the
// Harvester cluster clusterId and returns the credential's kubeconfig. previous is the account as it was (an edit):
// the namespaces it no longer has lose its Role and RoleBinding. rotate replaces the token Secret, so the
// kubeconfig gets a new token. wait and tries pace the wait for the token.
export async function ensureAccount(dispatch, clusterId, account, {
  previous = null, rotate = false, wait = timing.wait, tries = TOKEN_TRIES,
} = {}) {
  const req = client(dispatch, clusterId);
  let sa;

  for (const o of accountObjects(account)) {
    const got = await ensureOne(req, o, account.name);

    if (o.body.kind === 'ServiceAccount') {
      sa = got;
    }
  }
  if (rotate) {
    await dropToken(req, account);
  }
  await ensureOne(req, tokenSecret(account, sa), account.name, (s) => isTokenOf(s, account.name));
  for (const ns of previous?.namespaces || []) {
    if (!account.namespaces.includes(ns) && previous.name === account.name) {
      await dropNamespace(req, account.name, ns);
    }
  }
  const { token, caData } = await waitForToken(req, account, wait, tries);

  return kubeconfig({
    server: account.server.trim(), caData, token, namespace: account.namespace
  });
}

// harvesterServer is Harvester's API address as Harvester's own kubeconfig endpoint gives it, https://<VIP>:6443
// (harvester/harvester pkg/api/kubeconfig/generate_handler.go getServerURL, from the vip ConfigMap in
// harvester-system; harvester/guestaccount/kubeconfig.go discoverVIP reads it the same way), or '' when it cannot
// be read or holds no address.
export async function harvesterServer(dispatch, clusterId) {
  let ip;

  try {
    ip = String((await client(dispatch, clusterId)('get', VIP_CONFIGMAP))?.data?.ip || '').trim();
  } catch (e) {
    return '';
  }
  if (/^(\d{1,3})(\.\d{1,3}){3}$/.test(ip) && ip.split('.').every((n) => Number(n) <= 255) && ip !== '0.0.0.0') {
    return `https://${ ip }:${ HARVESTER_API_PORT }`;
  }
  if (/^[0-9a-fA-F:]+$/.test(ip) && ip.includes(':') && ip.length <= 39 && ip !== '::') {
    return `https://[${ ip }]:${ HARVESTER_API_PORT }`;
  }

  return '';
}

// harvesterNamespaces lists the Harvester cluster's namespaces through Rancher's proxy to its Steve API, with the
// settings that name its system namespaces (what the machine-config form reads: harvester.js).
export async function harvesterNamespaces(dispatch, clusterId) {
  const url = proxyUrl(clusterId);
  const [namespaces, settings] = await Promise.all([
    dispatch('cluster/request', { url: `${ url }/namespaces` }),
    dispatch('cluster/request', { url: `${ url }/management.cattle.io.settings` }).catch(() => ({ data: [] })),
  ]);

  return { namespaces: namespaces?.data || [], settings: settings?.data || [] };
}
