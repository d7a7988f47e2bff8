// Nothing is lost: every list field round-trips unchanged. decode then encode is the identity for every value the
// driver accepts (its entries as harvester/config decodes them: parse_disks.go diskJSON, parse_nics.go nicJSON,
// parse_hostdevices.go hostDeviceJSON, the vGPU entry), as JSON or base64 of JSON, with keys the form has no
// control for and keys it does not know; an edit changes only the key edited.
import fc from 'fast-check';
import { decodeList, encodeList, LISTS, setKey } from '../../pkg/hcivm/lib/lists';

const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const ref = fc.tuple(name, name).map(([ns, n]) => `${ ns }/${ n }`);
const count = fc.oneof(fc.integer({ min: 1, max: 1 << 20 }), fc.integer({ min: 1, max: 9999 }).map(String));
const extra = fc.dictionary(fc.stringMatching(/^x[A-Za-z]{0,8}$/), fc.jsonValue(), { maxKeys: 2 });
const entry = (fields) => fc.tuple(fc.record(fields, { requiredKeys: [] }), extra).map(([known, unknown]) => ({ ...unknown, ...known }));

const ENTRIES = {
  disks: entry({
    imageName: fc.oneof(ref, fc.constant('')), storageClassName: name, size: count, bootOrder: count,
    bus: fc.constantFrom('virtio', 'scsi', 'sata'), type: fc.constantFrom('disk', 'cd-rom'), hotPlugAble: fc.boolean(),
    accessMode: fc.constantFrom('ReadWriteMany', 'ReadWriteOnce'), volumeMode: fc.constantFrom('Block', 'Filesystem'),
    cache: fc.constantFrom('none', 'writethrough', 'writeback'), autoDelete: fc.boolean(),
    io: fc.constantFrom('native', 'threads'), dedicatedIOThread: fc.boolean(),
  }),
  nics: entry({
    networkName: ref, macAddress: fc.constantFrom('', '52:54:00:ab:cd:ef'), model: fc.constantFrom('virtio', 'e1000'),
    type: fc.constantFrom('bridge', 'masquerade'), bootOrder: count,
  }),
  vgpus:       entry({ name: fc.oneof(name, fc.constant('provisioned')), deviceName: fc.constantFrom('nvidia.com/NVIDIA_A2-2Q', 'nvidia.com/A16-4Q') }),
  hostDevices: entry({ name, deviceName: fc.constantFrom('nvidia.com/GA102GL_A10', 'kubevirt.io/h2-001002'), tag: fc.oneof(name, fc.constant('')) }),
};

// A list field's text as a user, Rancher or this form's first release may have written it.
const text = (list) => fc.tuple(fc.array(ENTRIES[list], { minLength: 1, maxLength: 4 }), fc.constantFrom(0, 2, 'plain'), fc.boolean(), extra)
  .map(([items, indent, base64, other]) => {
    const json = indent === 'plain' ? JSON.stringify({ [LISTS[list].key]: items, ...other }) : JSON.stringify({ ...other, [LISTS[list].key]: items }, null, indent);

    return base64 ? Buffer.from(json).toString('base64') : json;
  });

describe.each(Object.keys(LISTS))('the %s list', (list) => {
  it('is written back as the very text it was read from when nothing changed', () => {
    fc.assert(fc.property(text(list), (t) => {
      const decoded = decodeList(list, t);

      expect(decoded.readable).toBe(true);
      expect(encodeList(list, decoded, decoded.rows.map((r) => ({ ...r })))).toBe(t);
    }), { numRuns: 300 });
  });

  it('changes only the key edited, keeping every other key and entry', () => {
    fc.assert(fc.property(text(list), fc.nat(), (t, pick) => {
      const decoded = decodeList(list, t);
      const i = pick % decoded.rows.length;
      const rows = decoded.rows.map((r, j) => (j === i ? setKey(r, 'name', 'edited') : r));
      const out = JSON.parse(encodeList(list, decoded, rows));
      const before = decoded.doc;

      expect(out[LISTS[list].key][i]).toEqual({ ...before[LISTS[list].key][i], name: 'edited' });
      expect(out[LISTS[list].key].filter((_, j) => j !== i)).toEqual(before[LISTS[list].key].filter((_, j) => j !== i));
      expect(Object.keys(out).sort()).toEqual(Object.keys(before).sort());
    }), { numRuns: 300 });
  });
});

describe('list text', () => {
  it('that is not the driver\'s list is unreadable, and an empty list writes an empty field', () => {
    expect(decodeList('disks', 'not json').readable).toBe(false);
    expect(decodeList('disks', '').readable).toBe(true);
    const decoded = decodeList('disks', '{"disks":[{"size":1}]}');

    expect(encodeList('disks', decoded, [])).toBe('');
  });
});
