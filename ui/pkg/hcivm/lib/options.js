// The options of the forms' selects, as @rancher/shell's LabeledSelect takes them: {value, label}.

// withCurrent is options followed by each of values that no option has, as an option of its own: a value typed
// in, saved before or no longer offered by Harvester stays shown and selectable.
export function withCurrent(options, ...values) {
  const list = options || [];
  const extra = values.filter((v) => v && !list.some((o) => o.value === v));

  return extra.length ? [...list, ...extra.map((v) => ({ value: v, label: v }))] : list;
}

// choiceOptions are the options of values, the driver's own choices of a field or a list's column, labelled with l (the
// L10n mixin's) from hcivm.machineConfig.options.<name>.<value>; '' is the driver's default,
// hcivm.machineConfig.options.<name>.default.
export function choiceOptions(l, name, values) {
  return values.map((v) => ({ value: v, label: l(`hcivm.machineConfig.options.${ name }.${ v || 'default' }`) }));
}
