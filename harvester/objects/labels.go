package objects

import (
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// vmLabels are the labels of the VM and of its template (template labels reach the VMI and the virt-launcher
// pod, where the cloud provider and the scheduler's affinity terms look for them).
func vmLabels(cfg *config.Config) map[string]string {
	labels := map[string]string{
		config.LabelCreator:        config.CreatorName,
		config.LabelVMName:         cfg.MachineName,
		config.LabelMachineSetName: machineSetName(cfg.Namespace, cfg.MachineName),
	}
	if cfg.ClusterName != "" {
		labels[config.LabelGuestCluster] = cfg.ClusterName
		labels[config.LabelNodePool] = nodePoolName(cfg.ClusterName, cfg.MachineName)
	}
	// The user's labels never hold the driver's own keys (parseVMLabels refuses them).
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	if cfg.MaintenanceStrategy != "" {
		labels[config.LabelMaintainModeStrategy] = cfg.MaintenanceStrategy
	}
	return labels
}

// machineSetName is the value of harvesterhci.io/machineSetName: the namespace and the machine name minus its
// last two "-" parts (Rancher names machines <cluster>-<pool>-<hash>-<suffix>), e.g. default-gc8-pool1. The
// algorithm and its hashing are the reference driver's, so VMs of one pool match across driver versions.
func machineSetName(namespace, machineName string) string {
	parts := append([]string{namespace}, strings.Split(machineName, "-")...)
	return config.LabelValue(strings.Join(parts[:len(parts)-2], "-"))
}

// nodePoolName is the value of nodepool.harvesterhci.io/name: the machine name minus its last "-" part and minus
// the "<cluster>-" prefix, e.g. pool1-q99l7 for gc8-pool1-q99l7-6ndw9.
func nodePoolName(clusterName, machineName string) string {
	pool := machineName
	if i := strings.LastIndexByte(pool, '-'); i >= 0 {
		pool = pool[:i]
	}
	pool = strings.TrimLeft(strings.TrimPrefix(pool, clusterName), "-")
	return config.LabelValue(pool)
}
