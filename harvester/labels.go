package harvester

import (
	"encoding/base64"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations Harvester, its cloud provider and Rancher read on the objects this driver creates.
const (
	// LabelCreator marks VMs made by a node driver. Load-bearing: Harvester's VMI controller copies the host's
	// topology labels into VMI annotations only for this value (pkg/controller/master/virtualmachine/
	// vmi_controller.go), the cloud provider and the Harvester load balancer recognise guest-cluster VMs by it,
	// and the default anti-affinity spreads on it. It is also this driver's ownership mark: Remove refuses to
	// delete a VM without it.
	LabelCreator = "harvesterhci.io/creator"
	// CreatorName is LabelCreator's value. Keep it: Harvester compares against this exact string.
	CreatorName = "docker-machine-driver-harvester"

	LabelVMName         = "harvesterhci.io/vmName"
	LabelMachineSetName = "harvesterhci.io/machineSetName"
	LabelGuestCluster   = "guestcluster.harvesterhci.io/name"
	LabelNodePool       = "nodepool.harvesterhci.io/name"

	AnnotationVolumeClaimTemplates  = "harvesterhci.io/volumeClaimTemplates"
	AnnotationImageID               = "harvesterhci.io/imageId"
	AnnotationReservedMemory        = "harvesterhci.io/reservedMemory"
	AnnotationSSHNames              = "harvesterhci.io/sshNames"
	AnnotationWaitForLeaseInterface = "harvesterhci.io/waitForLeaseInterfaceNames"
	// AnnotationRemovedPVCs lists the claims Harvester deletes together with the VM. Exact spelling matters:
	// "harvesterhci.io/removedPVCs" is ignored.
	AnnotationRemovedPVCs = "harvesterhci.io/removedPersistentVolumeClaims"
	// AnnotationRemoveAllPVCs is set by Rancher on cluster delete: then the guest cluster's CSI volumes go too.
	AnnotationRemoveAllPVCs = "harvesterhci.io/removeAllPersistentVolumeClaims"
)

// vmLabels are the labels of the VM and of its template (template labels reach the VMI and the virt-launcher
// pod, where the cloud provider and the scheduler's affinity terms look for them).
func vmLabels(cfg *Config) map[string]string {
	labels := map[string]string{
		LabelCreator:        CreatorName,
		LabelVMName:         cfg.MachineName,
		LabelMachineSetName: machineSetName(cfg.Namespace, cfg.MachineName),
	}
	if cfg.ClusterName != "" {
		labels[LabelGuestCluster] = cfg.ClusterName
		labels[LabelNodePool] = nodePoolName(cfg.ClusterName, cfg.MachineName)
	}
	// The user's labels never hold the driver's own keys (parseVMLabels refuses them).
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	if cfg.MaintenanceStrategy != "" {
		labels[LabelMaintainModeStrategy] = cfg.MaintenanceStrategy
	}
	return labels
}

// machineSetName is the value of harvesterhci.io/machineSetName: the namespace and the machine name minus its
// last two "-" parts (Rancher names machines <cluster>-<pool>-<hash>-<suffix>), e.g. default-gc8-pool1. The
// algorithm and its hashing are the reference driver's, so VMs of one pool match across driver versions.
func machineSetName(namespace, machineName string) string {
	parts := append([]string{namespace}, strings.Split(machineName, "-")...)
	return labelValue(strings.Join(parts[:len(parts)-2], "-"))
}

// nodePoolName is the value of nodepool.harvesterhci.io/name: the machine name minus its last "-" part and minus
// the "<cluster>-" prefix, e.g. pool1-q99l7 for gc8-pool1-q99l7-6ndw9.
func nodePoolName(clusterName, machineName string) string {
	pool := machineName
	if i := strings.LastIndexByte(pool, '-'); i >= 0 {
		pool = pool[:i]
	}
	pool = strings.TrimLeft(strings.TrimPrefix(pool, clusterName), "-")
	return labelValue(pool)
}

// labelValue returns v when it is a valid label value, else hash_<base64url(FNV-1a-32(v))>_z — the reference
// driver's scheme (taken from cluster-api's label formatting), kept so mixed-version pools agree.
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	h := fnv.New32a()
	h.Write([]byte(v)) // hash.Hash.Write never fails
	return "hash_" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + "_z"
}
