// What the form reads from Harvester, through Rancher's proxy to the imported Harvester cluster
// (/k8s/clusters/<clusterId>/v1/<type>, Steve's API), as Rancher's Harvester form reads it (rancher/dashboard
// pkg/harvester-manager/machine-config/harvester.vue, fetch and getAvailableVGpuDevices).
//
// Types are named by their plural, <group>.<resource>, as that form names most of them. Steve answers both its
// schema ID (<group>.<kind>, singular) and that plural: rancher/steve pkg/controllers/schema/schemas.go sets each
// schema's PluralName with pkg/schema/converter/k8stonorman.go GVRToPluralName; rancher/apiserver
// pkg/types/schemas.go addToIndex indexes a schema under its ID and its PluralName, LookupSchema falls back to
// that index, and pkg/parse/parse.go then sets the operation's type to the schema's ID.

// The cloud credential's annotation naming the imported Harvester cluster its kubeconfig was made for. The
// hcivm credential type has one field, kubeconfigContent (the NodeDriver's privateCredentialFields), where
// Rancher's harvester type also has clusterId.
export const CLUSTER_ID_ANNOTATION = 'hcivm.cattle.io/clusterId';

export const RESOURCES = {
  namespaces:     'namespaces',
  images:         'harvesterhci.io.virtualmachineimages',
  networks:       'k8s.cni.cncf.io.network-attachment-definitions',
  storageClasses: 'storage.k8s.io.storageclasses',
  nodes:          'nodes',
  vgpus:          'devices.harvesterhci.io.vgpudevices',
  pciDevices:     'devices.harvesterhci.io.pcidevices',
  pciClaims:      'devices.harvesterhci.io.pcideviceclaims',
  keypairs:       'harvesterhci.io.keypairs',
  vmis:           'kubevirt.io.virtualmachineinstances',
};

export function proxyUrl(clusterId) {
  return `/k8s/clusters/${ clusterId }/v1`;
}

// clusterIdOf is the Harvester cluster of a cloud credential ('' for a pasted kubeconfig).
export function clusterIdOf(credential) {
  return credential?.annotations?.[CLUSTER_ID_ANNOTATION] || credential?.metadata?.annotations?.[CLUSTER_ID_ANNOTATION] || '';
}

// loadHarvester reads every list the form offers. A list Harvester does not serve or the user may not read is
// empty and named in `unavailable`; the form then takes text for it.
export async function loadHarvester(dispatch, clusterId) {
  const url = proxyUrl(clusterId);
  const get = (u) => dispatch('cluster/request', { url: u });
  const names = Object.keys(RESOURCES);
  const settled = await Promise.allSettled(names.map((n) => get(`${ url }/${ RESOURCES[n] }`)));
  const out = { unavailable: [] };

  names.forEach((n, i) => {
    out[n] = settled[i].status === 'fulfilled' ? (settled[i].value?.data || []) : [];
    if (settled[i].status !== 'fulfilled') {
      out.unavailable.push(n);
    }
  });
  out.deviceCapacity = null;
  try {
    const local = await get(`${ url }/harvester/cluster/local`);

    if (local?.links?.deviceCapacity) {
      out.deviceCapacity = await get(local.links.deviceCapacity);
    }
  } catch (e) {
    out.unavailable.push('deviceCapacity');
  }

  return out;
}

const ref = (o) => `${ o.metadata.namespace }/${ o.metadata.name }`;

// choices turns what loadHarvester read into the form's options: {value, label} lists per source; the free device
// counts are those of the hosts value's zones and regions allow.
export function choices(h, namespace, value = {}) {
  const labelValues = (key) => [...new Set((h.nodes || []).map((n) => n.metadata?.labels?.[key]).filter(Boolean))].sort()
    .map((v) => ({ value: v, label: v }));
  const inNs = (o) => !namespace || o.metadata.namespace === namespace;
  const caps = capacities(h, value);

  return {
    namespaces:     (h.namespaces || []).map((n) => ({ value: n.metadata.name, label: n.metadata.name })),
    images:         (h.images || []).filter((i) => !i.spec?.url?.endsWith('.iso')).map((i) => ({
      value: ref(i),
      label: `${ i.spec?.displayName || i.metadata.name } (${ ref(i) }; storage class ${ i.status?.storageClassName || 'default' })`,
    })),
    networks:       (h.networks || []).map((n) => ({ value: ref(n), label: ref(n) })),
    storageClasses: (h.storageClasses || []).map((s) => ({ value: s.metadata.name, label: s.metadata.name })),
    keypairs:       (h.keypairs || []).filter(inNs).map((k) => ({ value: ref(k), label: ref(k) })),
    zones:          labelValues('topology.kubernetes.io/zone'),
    regions:        labelValues('topology.kubernetes.io/region'),
    vgpuTypes:      Object.keys(caps.vgpu).sort().map((d) => ({ value: d, label: freeLabel(d, caps.vgpu[d]) })),
    hostDeviceTypes: Object.keys(caps.host).sort().map((d) => ({ value: d, label: freeLabel(d, caps.host[d]) })),
  };
}

function freeLabel(name, free) {
  return free === null ? name : `${ name } (${ free } free)`;
}

// capacities is the free count of each vGPU type (Harvester's deviceCapacity, by the type's resource name
// nvidia.com/<type with '_' for ' '>, null when unknown) and of each PCI device resource enabled for passthrough
// (a PCIDeviceClaim of a device's name), counted as the driver's pre-flight counts it (harvester/
// precreate_capacity.go, deviceUse): hostFree. Without the hosts or the VMIs the count is unknown (null), as the
// pre-flight then skips its check. Only the hosts in the machine's zones and regions count (value.zone and
// value.region, comma-separated; empty: any), as the pre-flight counts them (inTopology).
export function capacities(h, value = {}) {
  const vgpu = {};

  for (const v of h.vgpus || []) {
    if (!v.spec?.enabled || !v.spec?.vGPUTypeName) {
      continue;
    }
    const name = `nvidia.com/${ v.spec.vGPUTypeName.replace(/ /g, '_') }`;

    vgpu[name] = h.deviceCapacity ? Number(h.deviceCapacity[name] || 0) : null;
  }
  const claimed = new Set((h.pciClaims || []).map((c) => c.metadata.name));
  const known = !(h.unavailable || []).some((n) => n === 'nodes' || n === 'vmis');
  const host = {};

  for (const d of h.pciDevices || []) {
    const name = d.status?.resourceName;

    if (name && claimed.has(d.metadata.name)) {
      host[name] = known ? hostFree(h, name, inTopology(value)) : null;
    }
  }

  return { vgpu, host };
}

// hostFree is how many devices of resource the schedulable hosts can still give: per host its allocatable count
// less the VMIs placed there that hold one (never below 0), then less the VMIs not placed yet that ask for one. A
// VMI that has finished (Succeeded, Failed) holds nothing; one holds a device per gpus[] or hostDevices[] entry.
function hostFree(h, resource, placed) {
  const held = {};
  let waiting = 0;

  for (const vmi of h.vmis || []) {
    if (['Succeeded', 'Failed'].includes(vmi.status?.phase)) {
      continue;
    }
    const devices = vmi.spec?.domain?.devices || {};
    const n = [...(devices.gpus || []), ...(devices.hostDevices || [])].filter((d) => d.deviceName === resource).length;
    const node = vmi.status?.nodeName;

    if (!node) {
      waiting += n;
    } else {
      held[node] = (held[node] || 0) + n;
    }
  }
  const free = (h.nodes || []).filter((n) => !n.spec?.unschedulable && placed(n))
    .reduce((sum, n) => sum + Math.max(0, Number(n.status?.allocatable?.[resource] || 0) - (held[n.metadata.name] || 0)), 0);

  return Math.max(0, free - waiting);
}

// inTopology is whether the machine may run on a host: its zone and region labels are among value.zone and
// value.region (comma-separated lists; an empty list allows any).
function inTopology(value) {
  const list = (v) => (v || '').split(',').map((x) => x.trim()).filter(Boolean);
  const zones = list(value.zone);
  const regions = list(value.region);
  const label = (n, key) => n.metadata?.labels?.[`topology.kubernetes.io/${ key }`];

  return (n) => (!zones.length || zones.includes(label(n, 'zone'))) && (!regions.length || regions.includes(label(n, 'region')));
}
