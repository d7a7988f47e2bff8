// Reaching a form's controls as a user does: the @rancher/shell component inside the element marked
// data-field (or data-col within a list row), its label and options, and a value chosen or typed through the
// component's own update:value event (what LabeledSelect, LabeledInput, UnitInput, Checkbox, KeyValue and
// YamlEditor emit when a user changes them).
import LabeledSelect from '@shell/components/form/LabeledSelect';
import UnitInput from '@shell/components/form/UnitInput';
import KeyValue from '@shell/components/form/KeyValue';
import YamlEditor from '@shell/components/YamlEditor';
import { LabeledInput } from '@components/Form/LabeledInput';
import { Checkbox } from '@components/Form/Checkbox';
import { RadioGroup } from '@components/Form/Radio';
import { flush } from './helpers';

const KINDS = [UnitInput, LabeledSelect, LabeledInput, Checkbox, KeyValue, YamlEditor, RadioGroup];

// control is the shell component of field (the outermost inside [data-field="field"]); in a list, pass the row's
// element and the column as within and col.
export function control(page, field, { within = null, col = null, kind = null } = {}) {
  const scope = within || page.find(`[data-field="${ field }"]`);

  if (!scope.exists()) {
    throw new Error(`no control for ${ field }`);
  }
  const el = col ? scope.find(`[data-col="${ col }"]`) : scope;

  if (!el.exists()) {
    throw new Error(`no column ${ col } in ${ field }`);
  }
  for (const k of kind ? [kind] : KINDS) {
    const found = page.findAllComponents(k).filter((c) => el.element === c.element || el.element.contains(c.element) || (col && c.element.contains(el.element)));

    if (found.length) {
      return found[0];
    }
  }
  throw new Error(`no shell control in ${ field }${ col ? `/${ col }` : '' }`);
}

export async function choose(page, field, value, opts) {
  control(page, field, opts).vm.$emit('update:value', value);
  await flush(1);
}

export function optionsOf(page, field, opts) {
  return control(page, field, { ...opts, kind: LabeledSelect }).props('options');
}

export function labelOf(page, field, opts) {
  const c = control(page, field, opts);

  return c.props('label') || c.props('title');
}

export { LabeledSelect, UnitInput, KeyValue, YamlEditor, LabeledInput, Checkbox, RadioGroup };
