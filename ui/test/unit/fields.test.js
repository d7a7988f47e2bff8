import flagTable from '../../pkg/hcivm/flags.json';
import { ENUMS, FORM_FIELDS, NOT_IN_FORM } from '../../pkg/hcivm/lib/form-fields';
import { mountForm } from './helpers';

describe('the flag table', () => {
  it('is the second name\'s', () => {
    expect(flagTable.driver).toBe('hcivm');
    expect(flagTable.flags.every((f) => f.flag.startsWith('hcivm-'))).toBe(true);
  });

  it('has a form field or a reason for every flag, and no field without a flag', () => {
    const fields = flagTable.flags.map((f) => f.field);
    const missing = fields.filter((f) => !FORM_FIELDS[f] && !NOT_IN_FORM[f]);
    const both = fields.filter((f) => FORM_FIELDS[f] && NOT_IN_FORM[f]);
    const stray = [...Object.keys(FORM_FIELDS), ...Object.keys(NOT_IN_FORM)].filter((f) => !fields.includes(f));

    expect({ missing, both, stray }).toEqual({ missing: [], both: [], stray: [] });
  });

  it('names every choice the form offers in the flag\'s usage', () => {
    for (const [field, values] of Object.entries(ENUMS)) {
      const usage = flagTable.flags.find((f) => f.field === field).usage;

      for (const v of values.filter(Boolean)) {
        expect(`${ field }: ${ usage }`).toContain(v);
      }
    }
  });
});

describe('the machine-config form', () => {
  it('shows a control for every field of FORM_FIELDS', async() => {
    const { wrapper } = await mountForm();
    const shown = wrapper.findAll('[data-field]').map((w) => w.attributes('data-field'));

    expect(Object.keys(FORM_FIELDS).filter((f) => !shown.includes(f))).toEqual([]);
    for (const f of Object.keys(NOT_IN_FORM)) {
      expect(shown).not.toContain(f);
    }
  });
});
