// The script the list editors share (components/DiskList.vue, NicList.vue, DeviceList.vue): the machine config's
// list field (lists.js LISTS) decoded into rows, and every change written back to the field at once through
// encodeList, so that rows left as they were give back the very text that was read.
import { _VIEW } from '@shell/config/query-params';
import { decodeList, encodeList, LISTS, setKey } from './lists';
import { LIST_VALUES } from './form-fields';
import { choiceOptions, withCurrent } from './options';
import L10n from './l10n';

// listEditor is the mixin of the editor of list (a LISTS key), or, without list, of the list its prop list names.
// A component may define firstRow(): the row an empty list starts with in a new pool (seed: a pool Rancher has
// not saved yet, on the create page or added to an existing cluster), or null. A saved pool's empty list stays
// empty: writing a row into it would change the pool's machine template.
export function listEditor(list) {
  return {
    mixins: [L10n],
    props:  {
      value:    { type: Object, required: true }, // the machine config
      choices:  { type: Object, default: () => ({}) },
      mode:     { type: String, default: 'edit' },
      disabled: { type: Boolean, default: false },
      seed:     { type: Boolean, default: false },
    },

    data() {
      const name = list || this.list;
      const decoded = decodeList(name, this.value[LISTS[name].field]);
      const first = this.seed && this.mode !== _VIEW && !decoded.rows.length ? this.firstRow() : null;

      if (first) {
        decoded.rows = [first];
        decoded.original = '';
        this.value[LISTS[name].field] = encodeList(name, decoded, decoded.rows);
      }

      return { decoded, rows: decoded.rows };
    },

    computed: {
      listName() {
        return list || this.list;
      },
      // field is the machine config's field that holds the list.
      field() {
        return LISTS[this.listName].field;
      },
      isView() {
        return this.mode === _VIEW;
      },
      // legacy: the list has no row, and the config's single disk or NIC fields stand for it (DiskList, NicList).
      legacy() {
        return !this.rows.length;
      },
    },

    methods: {
      firstRow() {
        return null;
      },
      withCurrent,
      // choicesOf are the options of a column whose values are the driver's own (LIST_VALUES), its default first.
      choicesOf(name) {
        return choiceOptions((key) => this.l(key), name, ['', ...LIST_VALUES[name]]);
      },
      write(rows) {
        this.rows = rows;
        this.value[this.field] = encodeList(this.listName, this.decoded, rows);
      },
      set(i, key, v, keepEmpty = false) {
        this.write(this.rows.map((r, j) => (j === i ? setKey(r, key, v, keepEmpty) : r)));
      },
      remove(i) {
        this.write(this.rows.filter((_, j) => j !== i));
      },
    },
  };
}
