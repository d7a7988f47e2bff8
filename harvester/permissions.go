package harvester

import (
	"slices"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// PermissionNeed is one reason the credential must be allowed something in Harvester: When it is needed, the
// Flags that ask for it (none: every machine), and the Access it needs, each in the place it names or else in
// Where.
type PermissionNeed struct {
	When   string        `json:"when"`
	Flags  []string      `json:"flags,omitempty"`
	Where  string        `json:"where,omitempty"` // "VM namespace", or the namespace of the image, network or key pair
	Access []kube.Access `json:"access"`
}

// OptionalRead ends the When of what a pre-flight check reads without asking the access review for it: a
// credential without it is not refused, the check is skipped.
const OptionalRead = " (read; check skipped without)"

// Permissions is what the credential must be allowed to do, from the access lists declared beside the calls that
// need them (those the pre-flight's access review asks for, neededAccess, and the reads of checks that are skipped
// without theirs, harvester/preflight's), in the order a machine's life meets them. It is shared: the caller must not change it.
func Permissions() []PermissionNeed { return permissionNeeds }

var permissionNeeds = []PermissionNeed{
	{When: "always", Where: "VM namespace", Access: slices.Concat(createAccess, kube.WatchMachineAccess, removeAccess)},
	{When: "always", Where: "image's namespace", Access: preflight.ImageAccess},
	{When: "always", Where: "VM namespace", Access: cleanupAccess},
	{When: "resource quotas" + OptionalRead, Where: "VM namespace", Access: preflight.QuotaAccess},
	{When: "static addresses", Flags: []string{config.FlagIPPool}, Where: "network's namespace", Access: ippool.Access},
	{When: "addresses leased by Harvester's managed DHCP", Flags: []string{config.FlagIPPoolName}, Where: "VM namespace",
		Access: append(slices.Clone(iplease.Access), iplease.PinAccess)},
	{When: "Harvester's managed-DHCP IP pools" + OptionalRead, Flags: []string{config.FlagIPPoolName}, Where: "IPPool's namespace",
		Access: []kube.Access{iplease.PoolAccess}},
	{When: "load-balancer IP pools" + OptionalRead, Flags: []string{config.FlagIPPool, config.FlagIPPoolName}, Access: []kube.Access{preflight.LBPoolAccess}},
	{When: "Kube-OVN subnets of overlay networks" + OptionalRead, Flags: []string{config.FlagNetworkName, config.FlagNetworkInfo}, Access: []kube.Access{preflight.SubnetAccess}},
	{When: "host devices" + OptionalRead, Flags: []string{config.FlagHostDeviceInfo, config.FlagVGPUInfo}, Access: slices.Concat(preflight.HostDeviceAccess, preflight.DeviceCapacityAccess)},
	{When: "cloud-provider kubeconfig", Flags: []string{config.FlagGenerateCloudProviderConfig}, Where: "VM namespace",
		Access: guestaccount.Access},
	{When: "SSH key pairs", Flags: []string{config.FlagKeyPairName, config.FlagSSHKeyPairs}, Where: "key pair's namespace",
		Access: preflight.KeyPairAccess},
	{When: "user or network data in a Secret", Flags: []string{config.FlagUserDataSecret, config.FlagNetworkDataSecret}, Where: "VM namespace",
		Access: preflight.DataSecretAccess},
	{When: "objects a VM patch gives the guest", Flags: []string{config.FlagVMPatch}, Where: "VM namespace", Access: preflight.VMPatchObjectAccess},
}
