package preflight

import (
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// The names of the pre-flight's checks: their lines in the check verb's output, in the order of the table.
const (
	CheckCredential     = "credential"
	CheckNamespace      = "namespace"
	CheckPermissions    = "permissions"
	CheckMachineName    = "machine name"
	CheckImagesKeyPairs = "images and key pairs"
	CheckStorageClasses = "storage classes"
	CheckNetworks       = "networks"
	CheckDataSecrets    = "data Secrets"     // --harvester-user-data-secret, --harvester-network-data-secret
	CheckVMPatchObjects = "VM patch objects" // the Secrets, ConfigMaps and ServiceAccounts the patched VM gives the guest
	CheckQuota          = "quota"
	CheckZones          = "zones and regions"
	CheckHostDevices    = "host devices" // and their free capacity
	CheckIPPool         = "IP pool"
	CheckLBPools        = "load-balancer pools" // the address plan against Harvester's load-balancer IP pools
	// CheckAdmission is the check verb's own, after the pre-flight's (Input.Admission): the cluster's admission
	// judges the create's Secret and VM in a dry run.
	CheckAdmission = "admission"
)

// table is the pre-flight, one row a check in the order the check verb prints them (see row), each with the
// object of the machine it judges. They read different things, so they run at once: the pre-flight takes about as
// long as its longest chain of reads, not the sum of them. Adding a check is adding a row and its function.
var table = []row{
	{name: CheckCredential, check: checkCredential, opens: true},
	{name: CheckNamespace, needs: []string{CheckCredential}, check: checkNamespace},
	{name: CheckPermissions, needs: []string{CheckNamespace}, check: checkAccess},
	{name: CheckMachineName, reads: theNames, needs: []string{CheckNamespace}, check: checkNameFree},
	{name: CheckImagesKeyPairs, check: checkImagesKeyPairs},
	{name: CheckStorageClasses, reads: theVolumes, needs: []string{CheckImagesKeyPairs}, check: checkStorageClasses},
	{name: CheckNetworks, reads: theVM, check: checkNetworks},
	{name: CheckDataSecrets, flags: []string{config.FlagUserDataSecret, config.FlagNetworkDataSecret}, given: dataSecretsGiven,
		needs: []string{CheckNamespace, CheckNetworks}, check: checkDataSecrets},
	{name: CheckVMPatchObjects, reads: theVM, flags: []string{config.FlagVMPatch}, given: vmPatchGiven, needs: []string{CheckNamespace}, check: checkVMPatchObjects},
	{name: CheckQuota, reads: theVM, needs: []string{CheckImagesKeyPairs}, check: checkQuota},
	{name: CheckZones, reads: theVM, flags: []string{config.FlagZone, config.FlagRegion}, given: placementGiven, check: checkTopology},
	{name: CheckHostDevices, reads: theVM, flags: []string{config.FlagHostDeviceInfo, config.FlagVGPUInfo}, given: devicesGiven, check: checkDevices},
	{name: CheckIPPool, reads: thePlan, flags: poolFlags, given: ipPoolGiven, check: checkIPPool},
	{name: CheckLBPools, reads: thePlan, flags: poolFlags, given: ipPoolGiven, needs: []string{CheckIPPool}, check: checkLBPools},
}

// admissionRow is the check verb's row after the pre-flight's, never PreCreateCheck's.
var admissionRow = row{name: CheckAdmission, needs: []string{CheckNamespace, CheckPermissions, CheckImagesKeyPairs, CheckDataSecrets, CheckIPPool},
	check: checkAdmission}

// An object is what a check judges of the machine's objects (objects.Machine), which its ok line names.
type object int

const (
	// theFlags: the check judges no built object, the flags or what the cluster holds (the credential, the
	// images the disks name, …).
	theFlags object = iota
	// theNames: the VM's and its cloud-init Secret's names.
	theNames
	// theVM: the VirtualMachine, with --harvester-vm-patch applied.
	theVM
	// theVolumes: the VM's volume claims.
	theVolumes
	// thePlan: the plan of the static addresses (--harvester-ip-pool), or of the lease (--harvester-ip-pool-name).
	thePlan
)

// of words o for the check line of in's machine: "of VM default/m1".
func (o object) of(in *Input) string {
	if in.Machine == nil {
		return ""
	}
	vm := in.Machine.VM
	name := "VM " + vm.Namespace + "/" + vm.Name
	switch o {
	case theNames:
		return "of " + name + " and Secret " + vm.Namespace + "/" + objects.CloudInitSecretName(vm.Name)
	case theVM:
		return "of " + name
	case theVolumes:
		return "of the volumes of " + name
	case thePlan:
		if plan := in.Machine.Addresses; plan != nil {
			ranges := make([]string, len(plan.Ranges))
			for i, r := range plan.Ranges {
				ranges[i] = r.String()
			}
			return "of the address plan: " + strings.Join(ranges, " and ") + " on network " + plan.Network.String()
		}
		if plan := in.Machine.Lease; plan != nil {
			return "of the lease plan: IPPool " + plan.Pool.String() + " on network " + plan.Network.String()
		}
	}
	return ""
}
