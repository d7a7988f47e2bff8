package config

import (
	"encoding/base64"
	"hash/fnv"

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

	// CreatorSelector selects what node drivers made.
	CreatorSelector = LabelCreator + "=" + CreatorName

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

// LabelValue returns v when it is a valid label value, else hash_<base64url(FNV-1a-32(v))>_z — the reference
// driver's scheme (taken from cluster-api's label formatting), kept so mixed-version pools agree.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	h := fnv.New32a()
	h.Write([]byte(v)) // hash.Hash.Write never fails
	return "hash_" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + "_z"
}

// LabelMaintainModeStrategy tells Harvester what to do with a VM when its host enters maintenance mode. Harvester
// reads it on the VM (pkg/controller/master/node/maintain_controller.go, pkg/api/node/formatter.go, checked by
// pkg/webhook/resources/virtualmachine/validator.go) and on the virt-launcher pod, whose labels come from the VM's
// template (pkg/util/drainhelper/helper.go skips the pods of VMs to be shut down): it goes on both.
const LabelMaintainModeStrategy = "harvesterhci.io/maintain-mode-strategy"

// Labels and annotations of the static-address allocations (ConfigMaps, see harvester/ippool) and of the VMs
// that hold one. They are this driver's own; nothing in Harvester reads them.
const (
	// DriverKeyPrefix begins the labels and annotations that are this driver's own.
	DriverKeyPrefix = "node-driver.harvesterhci.io/"
	// LabelIPNetwork selects the allocations of one network (the name of its NetworkAttachmentDefinition).
	LabelIPNetwork = DriverKeyPrefix + "ip-network"
	// LabelIPVMNamespace and LabelIPVMName name the machine an allocation is for, to find it again on remove.
	LabelIPVMNamespace = DriverKeyPrefix + "ip-vm-namespace"
	LabelIPVMName      = DriverKeyPrefix + "ip-vm-name"
	// AnnotationIPAddress is the allocated address with its prefix length, e.g. 10.0.0.10/24.
	AnnotationIPAddress = DriverKeyPrefix + "ip-address"
	// AnnotationIPPool is the range it came from, as FIRST-LAST/PREFIX.
	AnnotationIPPool = DriverKeyPrefix + "ip-pool"
	// AnnotationIPVM is namespace/name of the machine's VM.
	AnnotationIPVM = DriverKeyPrefix + "ip-vm"
	// AnnotationIPVMUID is the VM's UID, recorded once the VM exists. Until then the allocation is a create in
	// flight, which lasts at most AnnotationIPLifetime seconds from the allocation's creationTimestamp.
	AnnotationIPVMUID    = DriverKeyPrefix + "ip-vm-uid"
	AnnotationIPLifetime = DriverKeyPrefix + "ip-lifetime-seconds"
	// AnnotationIPAllocation, on the VM and its VMI template, is namespace/name of the allocation it holds (of
	// both, comma-separated, IPv4 first, for a dual-stack pool).
	AnnotationIPAllocation = DriverKeyPrefix + "ip-allocation"
)

// The keys of a lease of Harvester's managed DHCP (--harvester-ip-pool-name).
const (
	// AnnotationIPLeasePool, on the VM, is namespace/name of the IPPool its first NIC's address is leased from:
	// the driver's own record (nothing in Harvester reads it), which makes the first NIC's MAC address and its
	// pinned lease the driver's (a VM patch may not change them).
	AnnotationIPLeasePool = DriverKeyPrefix + "ip-lease-pool"
	// AnnotationStaticIP, on the VM, pins the first NIC's lease to its address: the vm-dhcp-controller reads
	// static-ip.harvesterhci.io/<interface name> and leases that NIC the address it names
	// (harvester/vm-dhcp-controller#157, pkg/controller/vm/controller.go applyStaticIPAnnotations).
	AnnotationStaticIP = "static-ip.harvesterhci.io/" + PrimaryNIC
)

// AnnotationCreateID, on a VM, its cloud-init Secret and its address allocations, is the random id of the create
// that made them, saved with the machine (Driver.CreateID) before Create runs. It tells a machine's own VM from a
// later one of the same name when the machine's state lacks the VM's UID (a create that was killed before the
// state was saved again), and a create's own objects when the answer to their create was lost. This driver's
// own; nothing in Harvester reads it.
const AnnotationCreateID = DriverKeyPrefix + "create-id"

// LabelVMPatchAllowed, set to "true" on a Secret, ConfigMap or ServiceAccount of the VM namespace by an admin who
// may write it in Harvester, lets a VM patch (--harvester-vm-patch) give it to guests (harvester/objects,
// vmpatch_refs.go). The driver only reads it; the pool's editor cannot set it from Rancher.
const LabelVMPatchAllowed = DriverKeyPrefix + "vm-patch-allowed"

// AnnotationKeptVolumes, on the VM, lists (comma-separated) the volumes whose claims Remove leaves in Harvester:
// the disks given "autoDelete": false in --harvester-disk-info. The driver's own; nothing in Harvester reads it.
const AnnotationKeptVolumes = DriverKeyPrefix + "kept-volumes"
