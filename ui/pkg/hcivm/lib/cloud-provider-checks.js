// The machine-config form's part of Rancher's Harvester checks on the cluster page (versions.js says which, and why
// the form does them for hcivm): it reads Harvester's supported chart ranges and the chosen Kubernetes version's
// charts, takes the Harvester cloud provider of a new cluster back when the version changes to one Harvester does
// not support (the choice when the credential is read is machine-config/hcivm.vue's, chooseCloudProvider),
// and refuses the Harvester cloud provider where Rancher's page would not offer it. A cluster-wide finding (the
// version) is told once, by the first pool's form; a pool's own (a pasted kubeconfig without the driver's cloud
// provider kubeconfig) by each pool's. On the create page a refusal keeps the cluster from being saved, as the
// disabled option would; on the edit page it is a warning, as Rancher's banner is for a cluster it already runs.
import { _CREATE } from '@shell/config/query-params';
import { cloudProviderProblem, versionChanged } from './cluster';
import { clusterIdOf } from './harvester';
import { incompatible, releaseCharts, versionRange } from './versions';

export default {
  data() {
    return { versionRange: {}, releaseCharts: {} };
  },

  computed: {
    kubernetesVersion() {
      return this.cluster?.spec?.kubernetesVersion || '';
    },
    incompatible() {
      return incompatible(this.releaseCharts, this.versionRange);
    },
    // firstPool: this form is the first pool's still in the cluster (a removed pool stays in the list, marked).
    firstPool() {
      const i = (this.machinePools || []).findIndex((p) => !p.remove);

      return i < 0 || i === this.poolIndex;
    },
    // cloudProviderFinding is {key, refused}: the l10n key under hcivm.machineConfig.errors of what this
    // form tells about the Harvester cloud provider, and whether it keeps the cluster from being saved; null.
    cloudProviderFinding() {
      if (this.isView || !this.credential) {
        return null;
      }
      const key = cloudProviderProblem(this.cluster, this.credential, this.value, this.incompatible);

      if (!key || (key === 'cloudProviderIncompatible' && !this.firstPool)) {
        return null;
      }

      return { key, refused: this.mode === _CREATE };
    },
  },

  watch: {
    async kubernetesVersion() {
      if (this.credential && !this.isView) {
        await this.loadReleaseCharts();
        versionChanged(this.cluster, this.mode, this.incompatible);
      }
    },
  },

  methods: {
    // loadVersionChecks reads the ranges, for a credential of an imported Harvester cluster only (as
    // setHarvesterVersionRange), and the version's charts. What cannot be read is not compared: Rancher's page,
    // whose own read would have failed the same way, compares nothing then either.
    async loadVersionChecks() {
      const clusterId = clusterIdOf(this.credential);

      this.versionRange = {};
      if (clusterId && this.credential?.decodedData?.clusterType !== 'external') {
        try {
          this.versionRange = await versionRange(this.$store.dispatch, clusterId);
        } catch (e) {}
      }
      await this.loadReleaseCharts();
    },
    async loadReleaseCharts() {
      try {
        this.releaseCharts = await releaseCharts(this.$store.dispatch, this.kubernetesVersion);
      } catch (e) {
        this.releaseCharts = {};
      }
    },
  },
};
