// What Rancher does for the driver named harvester and not for this one (rancher/dashboard
// shell/edit/provisioning.cattle.io.cluster/rke2.vue isHarvesterDriver, setHarvesterChartValues; rancher/rancher
// pkg/controllers/capr/machineprovision/args.go toArgs, pkg/controllers/provisioningv2/harvestercleanup).
export const SECOND_NAME_NOTES = [
  'Rancher does not preselect the Harvester cloud provider for this driver: choose "Harvester" under Cluster '
    + 'Configuration → Basics → Cloud Provider yourself. Rancher then makes no cloud-provider config for it (it '
    + 'needs a credential of the built-in Harvester type): tick "generate cloud-provider config" below, which '
    + 'writes one into each machine.',
  "Rancher's Harvester cleanup does not run on cluster delete: the VMs are not marked to remove all their "
    + "volumes, so a removed machine takes its VM and its own disks, and volumes the guest cluster's CSI driver "
    + 'made stay in Harvester.',
  'Rancher passes the cluster name only to the driver named harvester: this form fills clusterName from the cluster.',
];
