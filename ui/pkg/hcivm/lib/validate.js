// validate returns what keeps a machine config from working, each problem as {field, key, args}: the l10n key of
// its message and the message's arguments (a field's label is given by its field, fieldKey, and translated by the
// form). The rules Rancher's own Harvester form applies (pkg/harvester-manager/machine-config/harvester.vue
// test, validatorDiskAndNetowrk, validatorVGpus: CPU, memory and disk size at least 1, a namespace and an SSH user,
// an image or a storage class for every disk, a network for every bridge NIC, MAC addresses, vGPUs counted over
// every pool of the cluster) and the driver's own cross-field rules (harvester/config validate.go).
import { isValidMac } from '@shell/utils/validators/cidr';
import { decodeList, LISTS } from './lists';
import { capacities } from './harvester';

const required = (field) => ({ field, key: 'validation.required', args: { fieldKey: field } });
const atLeast = (field, min, labelKey) => ({ field, key: 'validation.minValue', args: { fieldKey: labelKey || field, min } });
const positive = (v) => Number.isInteger(Number(v)) && Number(v) >= 1;

// pools are the cluster's machine pools as the cluster page holds them ({pool: {quantity}, config}); poolIndex is
// this config's. harvester is what loadHarvester read, or null.
export function validate(value, { harvester = null, pools = [], poolIndex = 0, clusterName = '' } = {}) {
  const problems = [];
  const add = (p) => problems.push(p);

  if (!value.clusterName && !clusterName) {
    add({ field: 'clusterName', key: 'hcivm.machineConfig.errors.clusterName' });
  }
  if (!positive(value.cpuCount)) {
    add(atLeast('cpuCount', 1));
  }
  if (!positive(value.memorySize)) {
    add(atLeast('memorySize', 1));
  }
  if (!value.vmNamespace) {
    add(required('vmNamespace'));
  }
  if (!value.sshUser) {
    add(required('sshUser'));
  }
  disks(value, add);
  nics(value, add);
  if (!value.ipPool && (value.ipPoolGateway || value.ipPoolDns || value.ipPoolDnsSearch)) {
    add({ field: 'ipPool', key: 'hcivm.machineConfig.errors.ipPoolEmpty' });
  }
  // One source each for the user data and the network data (harvester/config validate.go).
  if (value.userData && value.userDataSecret) {
    add({ field: 'userDataSecret', key: 'hcivm.machineConfig.errors.userDataTwice' });
  }
  if (value.networkData && value.networkDataSecret) {
    add({ field: 'networkDataSecret', key: 'hcivm.machineConfig.errors.networkDataTwice' });
  }
  if (value.networkDataSecret && value.ipPool) {
    add({ field: 'networkDataSecret', key: 'hcivm.machineConfig.errors.networkDataSecretWithPool' });
  }
  if (value.enableSecureBoot && !value.enableEfi) {
    add({ field: 'enableSecureBoot', key: 'hcivm.machineConfig.errors.secureBootNeedsEfi' });
  }
  if (value.persistentTpm && !value.enableTpm) {
    add({ field: 'persistentTpm', key: 'hcivm.machineConfig.errors.persistentTpmNeedsTpm' });
  }
  if (value.persistentEfi && !value.enableEfi) {
    add({ field: 'persistentEfi', key: 'hcivm.machineConfig.errors.persistentEfiNeedsEfi' });
  }
  ioThreads(value, add);
  if (value.isolateEmulatorThread && !value.cpuPinning) {
    add({ field: 'isolateEmulatorThread', key: 'hcivm.machineConfig.errors.isolateNeedsPinning' });
  }
  decodeList('hostDevices', value.hostDeviceInfo).rows.forEach((d, i) => {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(d?.name || '')) {
      add({ field: 'hostDeviceInfo', key: 'hcivm.machineConfig.errors.hostDeviceName', args: { n: i + 1 } });
    }
  });
  if (harvester) {
    const caps = capacities(harvester, value);
    const free = { ...caps.vgpu, ...Object.fromEntries(Object.entries(caps.host).map(([k, v]) => [k, v.free])) };

    devices(add, pools, poolIndex, value, free);
  }

  return problems;
}

function disks(value, add) {
  const { rows, readable } = decodeList('disks', value.diskInfo);

  if (!readable) {
    add({ field: 'diskInfo', key: 'hcivm.machineConfig.errors.unreadable', args: { fieldKey: 'diskInfo' } });

    return;
  }
  if (!rows.length) {
    if (!value.imageName) {
      add(required('imageName'));
    }
    if (!positive(value.diskSize)) {
      add(atLeast('diskSize', 1));
    }

    return;
  }
  rows.forEach((d, i) => {
    const args = { n: i + 1 };

    if (Object.prototype.hasOwnProperty.call(d, 'imageName') && !d.imageName) {
      add({ field: 'diskInfo', key: 'hcivm.machineConfig.errors.diskImage', args });
    } else if (!d.imageName && !d.storageClassName) {
      add({ field: 'diskInfo', key: 'hcivm.machineConfig.errors.diskStorageClass', args });
    }
    if (!positive(d.size)) {
      add({ field: 'diskInfo', key: 'hcivm.machineConfig.errors.diskSize', args });
    }
  });
}

// ioThreads: a thread count goes with the supplemental pool, and the pool with a count (harvester/config
// parse_diskio.go, parseDiskIO).
function ioThreads(value, add) {
  const count = String(value.ioThreadCount ?? '').trim();
  const pool = value.ioThreadsPolicy === 'supplementalPool';

  if (count !== '' && !/^\d+$/.test(count)) {
    add({ field: 'ioThreadCount', key: 'hcivm.machineConfig.errors.ioThreadCount' });
  } else if (Number(count) > 0 && !pool) {
    add({ field: 'ioThreadCount', key: 'hcivm.machineConfig.errors.ioThreadCountNeedsPool' });
  } else if (!(Number(count) > 0) && pool) {
    add({ field: 'ioThreadCount', key: 'hcivm.machineConfig.errors.poolNeedsIoThreadCount' });
  }
}

function nics(value, add) {
  const { rows, readable } = decodeList('nics', value.networkInfo);

  if (!readable) {
    add({ field: 'networkInfo', key: 'hcivm.machineConfig.errors.unreadable', args: { fieldKey: 'networkInfo' } });

    return;
  }
  if (!rows.length) {
    if (!value.networkName) {
      add(required('networkName'));
    }

    return;
  }
  rows.forEach((n, i) => {
    const args = { n: i + 1 };

    if (n.type !== 'masquerade' && !n.networkName) {
      add({ field: 'networkInfo', key: 'hcivm.machineConfig.errors.nicNetwork', args });
    }
    if (n.macAddress && !isValidMac(n.macAddress)) {
      add({ field: 'networkInfo', key: 'hcivm.machineConfig.errors.mac', args: { ...args, mac: n.macAddress } });
    }
  });
}

// devices counts the vGPUs and host devices every pool of the cluster asks for (per machine, times the pool's
// machine count; this pool's from value, which may be newer than the pool's copy) against what is free.
function devices(add, pools, poolIndex, value, free) {
  const wanted = {};
  const count = (config, quantity) => {
    for (const list of ['vgpus', 'hostDevices']) {
      const field = LISTS[list].field;

      for (const r of decodeList(list, config?.[field]).rows) {
        if (r?.deviceName) {
          wanted[r.deviceName] = wanted[r.deviceName] || { n: 0, field };
          wanted[r.deviceName].n += quantity;
        }
      }
    }
  };

  (pools.length ? pools : [{ pool: { quantity: 1 } }]).forEach((p, i) => {
    if (!p?.remove) {
      count(i === poolIndex ? value : p.config, Number(p?.pool?.quantity ?? 1));
    }
  });
  for (const [name, { n, field }] of Object.entries(wanted)) {
    const have = free[name];

    if (have !== undefined && have !== null && n > have) {
      add({ field, key: 'hcivm.machineConfig.errors.devicesFree', args: { name, wanted: n, free: have } });
    }
  }
}
