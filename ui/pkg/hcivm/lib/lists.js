// The JSON list fields (diskInfo, networkInfo, vgpuInfo, hostDeviceInfo): each entry as a row the form edits,
// and back to the text the driver reads. Nothing is lost: a row keeps every key of its entry, also those the form
// shows no control for (a disk's hotPlugAble, accessMode, volumeMode; keys this form does not know), and a list
// whose rows are unchanged is written back as the very text it was read from (JSON or base64 of JSON, its key
// order and spacing), so opening and saving a pool never changes its machines' config.
//
// The entries' keys are the driver's: harvester/config parse_disks.go diskJSON, parse_nics.go nicJSON,
// parse_hostdevices.go hostDeviceJSON and the vGPU entry ({name, deviceName}).

export const LISTS = {
  disks:       { field: 'diskInfo', key: 'disks' },
  nics:        { field: 'networkInfo', key: 'interfaces' },
  vgpus:       { field: 'vgpuInfo', key: 'vGPURequests' },
  hostDevices: { field: 'hostDeviceInfo', key: 'hostDevices' },
};

// decodeText reads a list field's text: JSON, or base64 of JSON as the driver also takes it
// (userdata.DecodeBase64OrPlain). It returns the parsed document, or null when the text is not such a document.
export function decodeText(text) {
  const s = String(text || '').trim();

  if (!s) {
    return null;
  }
  for (const candidate of [s, base64Text(s)]) {
    if (candidate === null) {
      continue;
    }
    try {
      const doc = JSON.parse(candidate);

      if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
        return doc;
      }
    } catch (e) {}
  }

  return null;
}

function base64Text(s) {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(s)) {
    return null;
  }
  try {
    const bytes = Uint8Array.from(atob(s.replace(/\s/g, '')), (c) => c.charCodeAt(0));

    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    return null;
  }
}

// A list as the form holds it: the rows, the document they came from and its text.
export function decodeList(list, text) {
  const doc = decodeText(text);
  const items = doc && Array.isArray(doc[LISTS[list].key]) ? doc[LISTS[list].key] : [];

  return {
    rows:     items.map((item) => (item && typeof item === 'object' && !Array.isArray(item) ? { ...item } : item)),
    doc,
    original: text || '',
    readable: !text || !!doc,
  };
}

// encodeList is the text for rows: the original text when the rows are what was read, else the document with its
// other keys kept and the list replaced (an empty list writes an empty field).
export function encodeList(list, decoded, rows) {
  const key = LISTS[list].key;
  const before = decoded.doc && Array.isArray(decoded.doc[key]) ? decoded.doc[key] : [];

  if (decoded.original && sameJSON(before, rows)) {
    return decoded.original;
  }
  if (!rows.length) {
    return '';
  }

  return JSON.stringify({ ...(decoded.doc || {}), [key]: rows });
}

export function sameJSON(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v) {
  if (Array.isArray(v)) {
    return v.map(canonical);
  }
  if (v && typeof v === 'object') {
    return Object.keys(v).sort().reduce((o, k) => ({ ...o, [k]: canonical(v[k]) }), {});
  }

  return v;
}

// setKey is a row with key set to value; an empty value removes the key, so the driver applies its default, unless
// keepEmpty (a key whose presence matters, as an image disk's imageName).
export function setKey(row, key, value, keepEmpty = false) {
  const out = { ...row };

  if ((value === '' || value === null || value === undefined) && !keepEmpty) {
    delete out[key];
  } else {
    out[key] = value;
  }

  return out;
}
