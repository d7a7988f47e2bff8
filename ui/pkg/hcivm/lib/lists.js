// The JSON list fields (diskInfo, networkInfo, vgpuInfo, hostDeviceInfo): their rows in the form, and the JSON
// the driver reads (see each flag's usage in flags.json). An empty list writes an empty field.

export const LISTS = {
  disks: {
    key:     'disks',
    columns: [
      { name: 'imageName', label: 'Image', source: 'images' },
      { name: 'storageClassName', label: 'Storage class', source: 'storageClasses' },
      { name: 'size', label: 'Size (GiB)', type: 'number' },
      { name: 'bus', label: 'Bus', options: ['virtio', 'scsi', 'sata'] },
      { name: 'type', label: 'Type', options: ['disk', 'cd-rom'] },
      { name: 'bootOrder', label: 'Boot order', type: 'number' },
      { name: 'cache', label: 'Cache', options: ['', 'none', 'writethrough', 'writeback'] },
      { name: 'autoDelete', label: 'Delete with machine', type: 'checkbox', default: true },
    ],
  },
  nics: {
    key:     'interfaces',
    columns: [
      { name: 'networkName', label: 'Network', source: 'networks' },
      { name: 'type', label: 'Type', options: ['bridge', 'masquerade'] },
      { name: 'model', label: 'Model', options: ['virtio', 'e1000', 'e1000e', 'igb', 'ne2k_pci', 'pcnet', 'rtl8139'] },
      { name: 'macAddress', label: 'MAC address' },
      { name: 'bootOrder', label: 'Boot order', type: 'number' },
    ],
  },
  vgpus: {
    key:     'vGPURequests',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'deviceName', label: 'vGPU type', source: 'vgpuTypes' },
    ],
  },
  hostDevices: {
    key:     'hostDevices',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'deviceName', label: 'Device', source: 'hostDeviceTypes' },
      { name: 'tag', label: 'Tag' },
    ],
  },
};

export function newRow(list) {
  const row = {};

  for (const c of LISTS[list].columns) {
    row[c.name] = c.default !== undefined ? c.default : (c.options ? c.options[0] : '');
  }

  return row;
}

// encodeList writes rows as the driver's JSON: numbers as numbers, empty values left out.
export function encodeList(list, rows) {
  if (!rows.length) {
    return '';
  }
  const out = rows.map((row) => {
    const o = {};

    for (const c of LISTS[list].columns) {
      const v = row[c.name];

      if (c.type === 'number') {
        if (v !== '' && v !== null && v !== undefined) {
          o[c.name] = Number(v);
        }
      } else if (c.type === 'checkbox') {
        o[c.name] = !!v;
      } else if (v) {
        o[c.name] = v;
      }
    }

    return o;
  });

  return JSON.stringify({ [LISTS[list].key]: out });
}

// decodeList reads a stored field back into rows; what is not a list of that kind gives none.
export function decodeList(list, text) {
  if (!text) {
    return [];
  }
  try {
    const items = JSON.parse(text)[LISTS[list].key];

    if (!Array.isArray(items)) {
      return [];
    }

    return items.map((item) => ({ ...newRow(list), ...item }));
  } catch (e) {
    return [];
  }
}
