// What the form reads from Harvester, through Rancher's proxy to the imported Harvester cluster
// (/k8s/clusters/<clusterId>/v1/<type>, Steve's API), and the choices it makes of it. The facts it applies are
// those of Rancher's own Harvester form (rancher/dashboard pkg/harvester-manager/machine-config/harvester.vue,
// v2.12–v2.15: fetch, imageOptions, networkOptions, storageClassOptions, cpuModelOptions, genCloudDataOptions,
// enableCpuPinningCheckbox, getAvailableVGpuDevices), read there and written here:
// - images: ready ones only (progress 100, neither Initialized nor Imported False), no ISO, newest first;
// - namespaces: no system namespace (Harvester's system-namespaces setting, Rancher's own list and markers) and
//   only those the user may update (Steve's links.update);
// - networks: no storage network (annotation storage-network.settings.harvesterhci.io);
// - storage classes for blank volumes: none that backs an image (parameters.backingImage), the default marked;
// - cloud-init templates: ConfigMaps labelled harvesterhci.io/cloud-init-template=user or network, their
//   data.cloudInit, one option per distinct text;
// - CPU models: harvester-system/node-cpu-model-configuration's data.cpuModels;
// - CPU pinning: offered when a host is labelled cpumanager=true.
//
// Types are named by their plural, <group>.<resource>. Steve answers both its schema ID (<group>.<kind>,
// singular) and that plural: rancher/steve pkg/controllers/schema/schemas.go sets each schema's PluralName with
// pkg/schema/converter/k8stonorman.go GVRToPluralName; rancher/apiserver pkg/types/schemas.go addToIndex indexes a
// schema under its ID and its PluralName.
import SYSTEM_NAMESPACES from '@shell/config/system-namespaces';
import { FLEET, HCI, STORAGE, SYSTEM_NAMESPACE } from '@shell/config/labels-annotations';
import { SETTING } from '@shell/config/settings';

const STORAGE_NETWORK = 'storage-network.settings.harvesterhci.io';
const CPU_MODEL_CONFIGMAP = 'harvester-system/node-cpu-model-configuration';

export const RESOURCES = {
  namespaces:      'namespaces',
  images:          'harvesterhci.io.virtualmachineimages',
  configMaps:      'configmaps',
  settings:        'management.cattle.io.settings',
  networks:        'k8s.cni.cncf.io.network-attachment-definitions',
  storageClasses:  'storage.k8s.io.storageclasses',
  nodes:           'nodes',
  vgpus:           'devices.harvesterhci.io.vgpudevices',
  pciDevices:      'devices.harvesterhci.io.pcidevices',
  pciClaims:       'devices.harvesterhci.io.pcideviceclaims',
  usbDevices:      'devices.harvesterhci.io.usbdevices',
  keypairs:        'harvesterhci.io.keypairs',
  vmis:            'kubevirt.io.virtualmachineinstances',
};

export function proxyUrl(clusterId) {
  return `/k8s/clusters/${ clusterId }/v1`;
}

// The credential's Harvester cluster, where Rancher's API returns it: the public field clusterId of the
// credential's <driver>credentialConfig (the model's decodedData). Credentials made by the extension's first
// release kept it in an annotation; those are read too.
export const LEGACY_CLUSTER_ID_ANNOTATION = 'hcivm.cattle.io/clusterId';

export function clusterIdOf(credential) {
  return credential?.decodedData?.clusterId || credential?.annotations?.[LEGACY_CLUSTER_ID_ANNOTATION] || '';
}

// loadHarvester reads every list the form offers. A list Harvester does not serve or the user may not read is
// empty and named in `unavailable`.
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

const ref = (o) => o.id || `${ o.metadata.namespace }/${ o.metadata.name }`;
const condition = (o, type) => (o.status?.conditions || []).find((c) => c.type === type);

export function imageReady(image) {
  return ![condition(image, 'Initialized')?.status, condition(image, 'Imported')?.status].includes('False') && image.status?.progress === 100;
}

function systemNamespace(ns, fromSetting) {
  const name = ns.metadata?.name || '';

  return fromSetting.includes(name) || SYSTEM_NAMESPACES.includes(name) || ns.metadata?.annotations?.[SYSTEM_NAMESPACE] === 'true' ||
    (name.startsWith('cattle-') && name.endsWith('-system')) || ns.metadata?.labels?.[FLEET.MANAGED] === 'true';
}

function settingValue(settings, id) {
  const s = (settings || []).find((x) => x.id === id || x.metadata?.name === id);

  return s ? (s.value || s.default || '') : '';
}

// cloudInitTemplates are the texts of Harvester's cloud-init templates of one kind (user or network), one option
// per distinct text, labelled with the ConfigMaps that hold it.
function cloudInitTemplates(configMaps, kind) {
  const byText = new Map();

  for (const cm of configMaps || []) {
    const text = cm.data?.cloudInit;

    if (cm.metadata?.labels?.[HCI.CLOUD_INIT] !== kind || !text) {
      continue;
    }
    byText.set(text, byText.has(text) ? `${ byText.get(text) }, ${ ref(cm) }` : ref(cm));
  }

  return [...byText].map(([value, label]) => ({ value, label }));
}

// cpuModels are the models Harvester's node CPU model ConfigMap lists: its global models, then the models with how
// many hosts are ready for each (label args for hcivm.machineConfig.cpuModel.hosts).
function cpuModels(configMaps, parse) {
  const cm = (configMaps || []).find((c) => ref(c) === CPU_MODEL_CONFIGMAP);
  let doc = null;

  try {
    doc = cm?.data?.cpuModels ? parse(cm.data.cpuModels) : null;
  } catch (e) {}
  if (!doc || typeof doc !== 'object') {
    return [];
  }
  const global = [...(Array.isArray(doc.globalModels) ? doc.globalModels : [])].map(String).sort();
  const models = Object.entries(doc.models || {}).sort(([a], [b]) => a.localeCompare(b));

  return [
    ...global.map((m) => ({ value: m, label: m })),
    ...models.map(([m, info]) => ({ value: m, label: m, hosts: Number(info?.readyCount || 0) })),
  ];
}

// choices turns what loadHarvester read into the form's options: {value, label} lists per source. parse reads the
// CPU model ConfigMap's YAML (js-yaml's load: Rancher provides js-yaml to extensions). value is the machine config:
// its zones and regions bound the free device counts.
export function choices(h, value = {}, parse = JSON.parse) {
  const labelValues = (key) => [...new Set((h.nodes || []).map((n) => n.metadata?.labels?.[key]).filter(Boolean))].sort()
    .map((v) => ({ value: v, label: v }));
  const fromSetting = settingValue(h.settings, SETTING.SYSTEM_NAMESPACES).split(',').map((s) => s.trim()).filter(Boolean);
  const caps = capacities(h, value);
  const noBackingImage = (h.storageClasses || []).filter((s) => !s.parameters?.backingImage);
  const isDefault = (s) => s.metadata?.annotations?.[STORAGE.DEFAULT_STORAGE_CLASS] === 'true';

  return {
    namespaces: (h.namespaces || []).filter((n) => !systemNamespace(n, fromSetting) && (!n.links || n.links.update))
      .map((n) => ({ value: n.metadata.name, label: n.metadata.name })),
    images: (h.images || []).filter((i) => !i.spec?.url?.endsWith('.iso') && imageReady(i))
      .sort((a, b) => String(b.metadata?.creationTimestamp || '').localeCompare(String(a.metadata?.creationTimestamp || '')))
      .map((i) => ({ value: ref(i), label: `${ i.spec?.displayName || i.metadata.name } (${ ref(i) })` })),
    networks: (h.networks || []).filter((n) => n.metadata?.annotations?.[STORAGE_NETWORK] !== 'true').map((n) => {
      let vlan;

      try {
        vlan = JSON.parse(n.spec?.config || '{}').vlan;
      } catch (e) {}

      return { value: ref(n), label: ref(n), vlan };
    }),
    storageClasses:      noBackingImage.map((s) => ({ value: s.metadata.name, label: s.metadata.name, isDefault: isDefault(s) })),
    defaultStorageClass: noBackingImage.find(isDefault)?.metadata?.name || '',
    keypairs:            (h.keypairs || []).filter((k) => !value.vmNamespace || k.metadata.namespace === value.vmNamespace)
      .map((k) => ({ value: ref(k), label: ref(k) })),
    zones:           labelValues('topology.kubernetes.io/zone'),
    regions:         labelValues('topology.kubernetes.io/region'),
    cpuModels:       cpuModels(h.configMaps, parse),
    userData:        cloudInitTemplates(h.configMaps, 'user'),
    networkData:     cloudInitTemplates(h.configMaps, 'network'),
    cpuManager:      (h.nodes || []).some((n) => n.metadata?.labels?.[HCI.CPU_MANAGER] === 'true'),
    vgpuTypes:       Object.keys(caps.vgpu).sort().map((d) => ({ value: d, free: caps.vgpu[d] })),
    hostDeviceTypes: Object.keys(caps.host).sort().map((d) => ({ value: d, free: caps.host[d].free, kind: caps.host[d].kind })),
  };
}

// capacities is the free count of each vGPU type (Harvester's deviceCapacity, by the type's resource name
// nvidia.com/<type with '_' for ' '>, null when unknown) and of each host device resource enabled for passthrough
// (a PCI device with a PCIDeviceClaim of its name, or a USB device whose status says enabled), counted as the
// driver's pre-flight counts it (harvester/preflight/capacity.go, deviceUse): hostFree. Without the hosts or the
// VMIs the count is unknown (null), as the pre-flight then skips its check. Only the hosts in the machine's zones
// and regions count (value.zone and value.region, comma-separated; empty: any), as the pre-flight counts them.
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
  const add = (name, kind) => {
    if (name && !host[name]) {
      host[name] = { kind, free: known ? hostFree(h, name, inTopology(value)) : null };
    }
  };

  for (const d of h.pciDevices || []) {
    if (claimed.has(d.metadata.name)) {
      add(d.status?.resourceName, 'pci');
    }
  }
  for (const d of h.usbDevices || []) {
    if (d.status?.enabled) {
      add(d.status?.resourceName, 'usb');
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
