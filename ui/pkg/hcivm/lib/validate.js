import { decodeList } from './lists';
import { capacities } from './harvester';

// validate returns what keeps the machine config from working, one {field, message} per problem. quantity is
// the pool's machine count: device requests are counted once per machine.
export function validate(value, harvester, quantity = 1) {
  const problems = [];
  const add = (field, message) => problems.push({ field, message });
  const disks = decodeList('disks', value.diskInfo);
  const nics = decodeList('nics', value.networkInfo);

  if (!value.vmNamespace) {
    add('vmNamespace', 'Choose the namespace the VMs are made in.');
  }
  if (disks.length) {
    disks.forEach((d, i) => {
      if (!d.imageName && !d.storageClassName) {
        add('diskInfo', `Disk ${ i + 1} needs an image or a storage class.`);
      }
    });
    if (!disks.some((d) => d.imageName)) {
      add('diskInfo', 'One disk needs an image to boot from.');
    }
  } else if (!value.imageName) {
    add('imageName', 'Choose the image of the root disk (or add disks).');
  } else if (!(Number(value.diskSize) > 0)) {
    add('diskSize', 'Give the size of the root disk in GiB.');
  }
  if (!nics.length && !value.networkName) {
    add('networkName', 'Choose a network (or add network interfaces).');
  }
  if (!value.ipPool && (value.ipPoolGateway || value.ipPoolDns || value.ipPoolDnsSearch)) {
    add('ipPool', 'The static address pool has no addresses: give a range or subnet, or clear its gateway and DNS.');
  }
  if (value.enableSecureBoot && !value.enableEfi) {
    add('enableSecureBoot', 'Secure Boot needs EFI.');
  }
  if (value.persistentTpm && !value.enableTpm) {
    add('persistentTpm', 'A persistent TPM needs the TPM.');
  }
  if (value.isolateEmulatorThread && !value.cpuPinning) {
    add('isolateEmulatorThread', 'Isolating the emulator thread needs CPU pinning.');
  }
  if (harvester) {
    const caps = capacities(harvester, value);

    beyond(add, 'vgpuInfo', decodeList('vgpus', value.vgpuInfo), caps.vgpu, quantity);
    beyond(add, 'hostDeviceInfo', decodeList('hostDevices', value.hostDeviceInfo), caps.host, quantity);
  }

  return problems;
}

function beyond(add, field, rows, free, quantity) {
  const wanted = {};

  for (const r of rows) {
    if (r.deviceName) {
      wanted[r.deviceName] = (wanted[r.deviceName] || 0) + 1;
    }
  }
  for (const [name, n] of Object.entries(wanted)) {
    const have = free[name];

    if (have === undefined || have === null) {
      continue;
    }
    if (n * quantity > have) {
      add(field, `${ name }: ${ n * quantity } wanted (${ n } per machine, ${ quantity } machines), ${ have } free.`);
    }
  }
}
