// The cluster autoscaler's capacity annotations of a pool that autoscales, so that Rancher's autoscaler can grow it
// from zero machines: the form writes them into the pool's machineDeploymentAnnotations, which Rancher copies onto
// the pool's MachineDeployment (rancher/rancher pkg/controllers/provisioningv2/provisioningcluster/template.go
// machineDeployments), where the autoscaler's clusterapi provider reads them (kubernetes/autoscaler
// cluster-autoscaler/cloudprovider/clusterapi clusterapi_utils.go, clusterapi_unstructured.go; the same keys and
// formats in cluster-autoscaler-1.32.0 to 1.35.0). The figures are those of the driver's harvester/autoscale
// (docs/autoscaling.md), from the form's fields: the VM patch and passed-through PCI devices are not read here.
import { decodeList } from './lists';
import { agentConfigOf } from './cluster';

export const PREFIX = 'capacity.cluster-autoscaler.kubernetes.io/';
export const KEYS = ['cpu', 'memory', 'ephemeral-disk', 'gpu-count', 'gpu-type', 'labels', 'taints'].map((k) => PREFIX + k);

// What Harvester's VM mutator reserves of the memory without --harvester-reserved-memory-size before v1.5 (or with
// its additional-guest-memory-overhead-ratio setting cleared): the lower of its two figures is given.
const RESERVED_DEFAULT_MI = 100;
const LABEL_WORKER = 'node-role.kubernetes.io/worker';
const NVIDIA_GPU = 'nvidia.com/gpu';
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
// A label's key (an optional DNS prefix, a name) and value, as the kubelet takes them (k8s.io/apimachinery
// validation IsQualifiedName, IsValidLabelValue).
const NAME = '([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)';
const QUALIFIED = new RegExp(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?${ NAME }$`);
const VALUE = new RegExp(`^(${ NAME })?$`);

const validLabel = (k, v) => QUALIFIED.test(k) && k.length <= 316 && VALUE.test(String(v ?? ''));
const whole = (v, dflt) => (Number.isInteger(Number(v)) && String(v).trim() !== '' ? Number(v) : dflt);

// autoscales is whether Rancher's autoscaler scales the pool: both its bounds are set (rancher/rancher pkg/capr
// common.go AutoscalerEnabledByProvisioningCluster; Rancher's pool form sets or deletes both together).
export function autoscales(pool) {
  return pool?.autoscalingMinSize !== undefined && pool?.autoscalingMinSize !== null &&
    pool?.autoscalingMaxSize !== undefined && pool?.autoscalingMaxSize !== null;
}

// rootDiskSize is the size in GiB of the disk that boots first when it is cloned from an image, or null.
function rootDiskSize(config) {
  const disks = decodeList('disks', config.diskInfo).rows.filter((d) => d && typeof d === 'object');

  if (!disks.length) {
    return config.imageName && whole(config.diskSize, 0) > 0 ? whole(config.diskSize, 0) : null;
  }
  const order = (x) => (whole(x?.bootOrder, 0) > 0 ? whole(x.bootOrder, 0) : Infinity);
  const first = disks.reduce((a, d) => (order(d) < order(a) ? d : a), disks[0]);
  const nics = decodeList('nics', config.networkInfo).rows;

  if (nics.some((n) => order(n) < order(first)) || first.type === 'cd-rom' || !first.imageName || !(whole(first.size, 0) > 0)) {
    return null;
  }

  return whole(first.size, 0);
}

// oneOf is the one value of a comma-separated list field, or null.
function oneOf(text) {
  const values = String(text || '').split(',').map((s) => s.trim()).filter(Boolean);

  return values.length === 1 ? values[0] : null;
}

// capacityOf is the annotations a pool of config needs, from the pool as Rancher's cluster page holds it
// (machinePools[i].pool: labels, taints, workerRole) and the cluster (its cloud provider).
export function capacityOf(config, pool, cluster) {
  const out = {};
  const cpu = whole(config.cpuCount, 2);
  const memoryMi = whole(config.memorySize, 4) * 1024;
  const reservedMi = whole(config.reservedMemorySize, -1);

  if (cpu > 0) {
    out[`${ PREFIX }cpu`] = String(cpu);
  }
  const guestMi = memoryMi - (reservedMi > 0 ? reservedMi : RESERVED_DEFAULT_MI);

  if (guestMi > 0) {
    out[`${ PREFIX }memory`] = `${ guestMi }Mi`;
  }
  const disk = rootDiskSize(config);

  if (disk) {
    out[`${ PREFIX }ephemeral-disk`] = `${ disk }Gi`;
  }
  const vgpus = decodeList('vgpus', config.vgpuInfo).rows.filter((g) => g && typeof g === 'object');

  if (vgpus.length) {
    out[`${ PREFIX }gpu-count`] = String(vgpus.length);
    if (vgpus.every((g) => String(g.deviceName || '').startsWith('nvidia.com/'))) {
      out[`${ PREFIX }gpu-type`] = NVIDIA_GPU;
    }
  }

  const labels = {};

  for (const [k, v] of Object.entries(pool?.labels || {})) {
    if (validLabel(k, v)) {
      labels[k] = String(v ?? '');
    }
  }
  if (pool?.workerRole) {
    labels[LABEL_WORKER] = 'true';
  }
  if (agentConfigOf(cluster)?.['cloud-provider-name'] === 'harvester') {
    for (const [field, key, beta] of [['zone', 'topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'],
      ['region', 'topology.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/region']]) {
      const v = oneOf(config[field]);

      if (v && VALUE.test(v)) {
        labels[key] = v;
        labels[beta] = v;
      }
    }
  }
  const pairs = Object.keys(labels).sort().map((k) => `${ k }=${ labels[k] }`);

  if (pairs.length) {
    out[`${ PREFIX }labels`] = pairs.join(',');
  }
  const taints = (Array.isArray(pool?.taints) ? pool.taints : [])
    .filter((t) => t && QUALIFIED.test(t.key || '') && VALUE.test(String(t.value ?? '')) && TAINT_EFFECTS.includes(t.effect))
    .map((t) => `${ t.key }${ t.value ? `=${ t.value }` : '' }:${ t.effect }`);

  if (taints.length) {
    out[`${ PREFIX }taints`] = taints.join(',');
  }

  return out;
}

// applyAutoscaling writes into pool.machineDeploymentAnnotations the annotations of config when the pool
// autoscales, in place of the pool's annotations of those keys (a GPU count kept when the config passes host
// devices through); when the pool does not autoscale it writes none, and takes away those it set while the form
// was open (set: what it set last, {key: value}) that still hold its value. The pool's other annotations stay. It
// returns what it has set now, for the next call.
export function applyAutoscaling(pool, config, cluster, set = {}) {
  if (!pool) {
    return {};
  }
  const current = { ...(pool.machineDeploymentAnnotations || {}) };

  for (const [k, v] of Object.entries(set)) {
    if (current[k] === v) {
      delete current[k];
    }
  }
  let now = {};

  if (autoscales(pool)) {
    now = capacityOf(config, pool, cluster);
    // The form owns these keys of an autoscaling pool, but a GPU count it cannot compute: passed-through PCI
    // devices, whose class only Harvester knows, are counted by hand or by check --cluster.
    const hostDevices = decodeList('hostDevices', config.hostDeviceInfo).rows.length > 0;

    for (const k of KEYS) {
      if (now[k] === undefined && hostDevices && k.startsWith(`${ PREFIX }gpu-`)) {
        continue;
      }
      delete current[k];
    }
    Object.assign(current, now);
  }
  if (Object.keys(current).length) {
    pool.machineDeploymentAnnotations = current;
  } else {
    delete pool.machineDeploymentAnnotations;
  }

  return now;
}
