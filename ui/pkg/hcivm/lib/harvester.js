// What the form reads from Harvester, through Rancher's proxy to the imported Harvester cluster
// (/k8s/clusters/<clusterId>/v1/<type>, Steve's API), as Rancher's Harvester form reads it (rancher/dashboard
// pkg/harvester-manager/machine-config/harvester.vue, fetch and getAvailableVGpuDevices).

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

// choices turns what loadHarvester read into the form's options: {value, label} lists per source.
export function choices(h, namespace) {
  const labelValues = (key) => [...new Set((h.nodes || []).map((n) => n.metadata?.labels?.[key]).filter(Boolean))].sort()
    .map((v) => ({ value: v, label: v }));
  const inNs = (o) => !namespace || o.metadata.namespace === namespace;
  const caps = capacities(h);

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
// nvidia.com/<type with '_' for ' '>, null when unknown) and of each PCI device resource: the devices enabled for
// passthrough (those with a PCIDeviceClaim of their name), whether a VM uses one already or not.
export function capacities(h) {
  const vgpu = {};

  for (const v of h.vgpus || []) {
    if (!v.spec?.enabled || !v.spec?.vGPUTypeName) {
      continue;
    }
    const name = `nvidia.com/${ v.spec.vGPUTypeName.replace(/ /g, '_') }`;

    vgpu[name] = h.deviceCapacity ? Number(h.deviceCapacity[name] || 0) : null;
  }
  const claimed = new Set((h.pciClaims || []).map((c) => c.metadata.name));
  const host = {};

  for (const d of h.pciDevices || []) {
    const name = d.status?.resourceName;

    if (!name || !claimed.has(d.metadata.name)) {
      continue;
    }
    host[name] = (host[name] || 0) + 1;
  }

  return { vgpu, host };
}
