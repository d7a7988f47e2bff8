// l is t (the i18n plugin's, @rancher/shell plugins/i18n.js) without HTML escaping: the forms put the words into
// Vue's text interpolation and props, which escape them themselves (escaped twice, "cluster's" would show
// "cluster&#39;s").
export default {
  methods: {
    l(key, args) {
      return this.t(key, args || {}, true);
    },
  },
};
