import flagTable from '../../pkg/hcivm/flags.json';
import en from '../../pkg/hcivm/l10n/en-us.yaml';
import {
  FORM_FIELDS, LIST_VALUES, NOT_IN_FORM, SECTIONS
} from '../../pkg/hcivm/lib/form-fields';
import * as rancher from '../fixtures/rancher';
import { mountMachineConfig, newConfig } from './helpers';

const get = (key) => key.split('.').reduce((o, k) => (o === undefined ? undefined : o[k]), en);
const strings = (o, path = '') => Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? strings(v, `${ path }${ k }.`) : [[`${ path }${ k }`, v]]));

describe('the flag table', () => {
  it('is the second name\'s', () => {
    expect(flagTable.driver).toBe('hcivm');
    expect(flagTable.flags.every((f) => f.flag.startsWith('hcivm-'))).toBe(true);
  });

  it('has a form control or a written reason for every flag, and no control without a flag', () => {
    const fields = flagTable.flags.map((f) => f.field);
    const missing = fields.filter((f) => !FORM_FIELDS[f] && !NOT_IN_FORM[f]);
    const both = fields.filter((f) => FORM_FIELDS[f] && NOT_IN_FORM[f]);
    const stray = [...Object.keys(FORM_FIELDS), ...Object.keys(NOT_IN_FORM)].filter((f) => !fields.includes(f));

    expect({ missing, both, stray }).toEqual({ missing: [], both: [], stray: [] });
    // The credential's fields are the credential form's.
    expect(flagTable.flags.filter((f) => f.credential).map((f) => f.field).filter((f) => !NOT_IN_FORM[f])).toEqual([]);
  });

  it('puts every control in a section', () => {
    const ids = SECTIONS.map((s) => s.id);

    expect(Object.entries(FORM_FIELDS).filter(([, row]) => !ids.includes(row.section))).toEqual([]);
  });

  it('offers only choices the flag\'s usage names', () => {
    for (const [field, row] of Object.entries(FORM_FIELDS).filter(([, r]) => r.values)) {
      const usage = flagTable.flags.find((f) => f.field === field).usage;

      for (const v of row.values.filter(Boolean)) {
        expect(`${ field }: ${ usage }`).toContain(v);
      }
    }
  });
});

describe('the words of the forms (l10n/en-us.yaml)', () => {
  it('label every control and every choice', () => {
    const missing = [];

    for (const [field, row] of Object.entries(FORM_FIELDS)) {
      if (!get(`hcivm.machineConfig.fields.${ field }.label`)) {
        missing.push(`${ field }.label`);
      }
      for (const v of row.values || []) {
        if (!get(`hcivm.machineConfig.options.${ field }.${ v || 'default' }`)) {
          missing.push(`options.${ field }.${ v || 'default' }`);
        }
      }
    }
    for (const [name, list] of Object.entries(LIST_VALUES)) {
      for (const v of ['default', ...list]) {
        if (!get(`hcivm.machineConfig.options.${ name }.${ v }`)) {
          missing.push(`options.${ name }.${ v }`);
        }
      }
    }
    for (const s of SECTIONS.filter((x) => x.id !== 'basics')) {
      if (!get(`hcivm.machineConfig.sections.${ s.id }`)) {
        missing.push(`sections.${ s.id }`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('are plain words: no flag, no environment variable, no field name, no command-line usage', () => {
    const fields = flagTable.flags.map((f) => f.field).filter((f) => /[a-z][A-Z]/.test(f));
    // Harvester's own names an admin reads in Harvester are words too: its setting of the supported chart versions
    // and the two charts it names.
    const harvesterNames = /\bharvester-(csi-ccm-versions|cloud-provider|csi-driver)\b/g;
    const bad = strings(en).filter(([, v]) => /--|hcivm-|HCIVM_|harvester-/.test(v.replace(harvesterNames, '')) || fields.some((f) => new RegExp(`\\b${ f }\\b`).test(v)));

    expect(bad).toEqual([]);
  });
});

describe('the machine-config form', () => {
  it('shows a control for every field of FORM_FIELDS, in a new config and in one without volume and network lists', async() => {
    const shown = new Set();

    for (const args of [{}, {
      mode: 'edit', cluster: rancher.clusterForEdit(), config: { ...newConfig(), imageName: 'default/ubuntu', diskSize: '10', networkName: 'default/vlan1' },
    }]) {
      const { page, value } = await mountMachineConfig(args);

      // Fields shown only with another set: set it.
      for (const row of Object.values(FORM_FIELDS).filter((r) => r.showIf)) {
        value[row.showIf] = true;
      }
      await new Promise((r) => setTimeout(r, 0));
      page.findAll('[data-field]').forEach((w) => shown.add(w.attributes('data-field')));
    }
    expect(Object.keys(FORM_FIELDS).filter((f) => !shown.has(f))).toEqual([]);
    expect(Object.keys(NOT_IN_FORM).filter((f) => shown.has(f))).toEqual([]);
  });
});
