// What the credential must be allowed to do in Harvester, from the driver itself: `flags --json` prints its
// permission needs beside the flag table (harvester/permissions.go, made of the access lists declared beside the
// calls that need them; make ui-flags writes flags.json and a Go test keeps it equal to the driver's). Folded here
// into the rows the cloud-credential form shows.
import flagTable from '../flags.json';

const FIELD_OF_FLAG = Object.fromEntries(flagTable.flags.map((f) => [f.flag, f.field]));

// gather lists each resource (and name) of a need with its verbs, in the place the access names or else the
// need's.
function gather(need) {
  const each = [];

  for (const a of need.access) {
    const t = {
      group:    a.group || '',
      resource: a.name ? `${ a.resource } named ${ a.name }` : a.resource,
      where:    a.clusterScoped ? 'cluster' : (a.namespace || need.where),
    };
    const seen = each.find((e) => e.group === t.group && e.where === t.where && e.resource === t.resource);

    if (!seen) {
      each.push({ ...t, verbs: [a.verb] });
    } else if (!seen.verbs.includes(a.verb)) {
      seen.verbs.push(a.verb);
    }
  }

  return each;
}

// permissionRows folds needs into rows: the resources of one API group with the same verbs in the same place
// share a row ("settings named a, b" for one resource narrowed to names). fieldOf names a flag's form field.
export function permissionRows(needs, fieldOf = FIELD_OF_FLAG) {
  const rows = [];

  for (const need of needs) {
    const fields = (need.flags || []).map((f) => fieldOf[f] || f).join(', ');
    const folded = [];

    for (const e of gather(need)) {
      const verbs = e.verbs.join(', ');
      const [resource, name] = e.resource.split(' named ');
      const row = folded.find((r) => r.group === e.group && r.where === e.where && r.verbs === verbs);

      if (!row) {
        folded.push({
          when: need.when, fields, group: e.group, resource: e.resource, verbs, where: e.where
        });
      } else if (name && row.resource.startsWith(`${ resource } named `)) {
        row.resource += `, ${ name }`;
      } else {
        row.resource += `, ${ e.resource }`;
      }
    }
    rows.push(...folded);
  }

  return rows;
}

export const PERMISSIONS = permissionRows(flagTable.permissions);
