package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The fields of Harvester's managed DHCP (the vm-dhcp-controller add-on) the driver reads, mirrored from
// github.com/harvester/vm-dhcp-controller pkg/apis/network.harvesterhci.io/v1alpha1 (ippool.go,
// virtualmachinenetworkconfig.go) at commit b8c4473721b3f03633ff73375a8487e124c48500, the head of
// harvester/vm-dhcp-controller#157, which brought the static-ip.harvesterhci.io/<nic> annotation (the types are
// those of v1.9.0-rc3 and earlier). That module is not linked: the Go module proxy does not serve it. Both
// resources are namespaced. TestNetworkIPPoolMirrorMatchesTheCRD pins these types to the CRDs the test bed
// installs (e2e/crds/mirrored), themselves mirrored from that commit's chart/crds.

// NetworkGroupVersion is the API group and version of the vm-dhcp-controller's resources.
var NetworkGroupVersion = schema.GroupVersion{Group: "network.harvesterhci.io", Version: "v1alpha1"}

// The vm-dhcp-controller's resources: the pools of addresses it leases, and the per-VM record of its leases.
var (
	NetworkIPPools   = kind[NetworkIPPool](NetworkGroupVersion, "IPPool", "ippools")
	VMNetworkConfigs = kind[VMNetworkConfig](NetworkGroupVersion, "VirtualMachineNetworkConfig", "virtualmachinenetworkconfigs")
)

// Labels and values of the vm-dhcp-controller the driver reads (pkg/util/common.go).
const (
	// LabelIPPoolNamespace and LabelIPPoolName on a VM network's NetworkAttachmentDefinition name the IPPool that
	// serves it; the controller's IPPool handler sets them (pkg/controller/ippool/controller.go, ensureNADLabels)
	// and its VirtualMachineNetworkConfig handler finds a network's pool by them (getIPPoolFromNetworkName).
	LabelIPPoolNamespace = "network.harvesterhci.io/ippool-namespace"
	LabelIPPoolName      = "network.harvesterhci.io/ippool-name"
	// ExcludedMark and ReservedMark stand in an IPPool's status.ipv4.allocated for the addresses it never leases:
	// its spec's exclude list, and its DHCP server's and router's addresses.
	ExcludedMark = "EXCLUDED"
	ReservedMark = "RESERVED"
	// NetworkConfigAllocated is the state of a lease in a VirtualMachineNetworkConfig's status.
	NetworkConfigAllocated = "Allocated"
)

// NetworkIPPool mirrors network.harvesterhci.io/v1alpha1 IPPool: the IPv4 subnet of one VM network (NetworkName),
// the range of it the controller leases by DHCP, and what it has leased (status.ipv4.allocated: address → MAC).
type NetworkIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NetworkIPPoolSpec   `json:"spec"`
	Status            NetworkIPPoolStatus `json:"status,omitempty"`
}

// NetworkIPPoolSpec mirrors IPPoolSpec.
type NetworkIPPoolSpec struct {
	IPv4Config  IPv4Config `json:"ipv4Config,omitempty"`
	NetworkName string     `json:"networkName"`
	Paused      *bool      `json:"paused,omitempty"`
}

// IPv4Config mirrors IPv4Config: the DHCP options (dns, domainName, domainSearch, ntp, leaseTime) are left out.
type IPv4Config struct {
	CIDR     string    `json:"cidr"`
	ServerIP string    `json:"serverIP"`
	Router   string    `json:"router,omitempty"`
	Pool     IPv4Range `json:"pool"`
}

// IPv4Range mirrors Pool: the first and last address leased (both inclusive) and the addresses never leased.
type IPv4Range struct {
	Start   string   `json:"start"`
	End     string   `json:"end"`
	Exclude []string `json:"exclude,omitempty"`
}

// NetworkIPPoolStatus mirrors IPPoolStatus: lastUpdate and agentPodRef are left out.
type NetworkIPPoolStatus struct {
	IPv4       *IPv4Status `json:"ipv4,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// IPv4Status mirrors IPv4Status: Allocated maps each address held to the MAC address of its lease, or to
// ExcludedMark or ReservedMark.
type IPv4Status struct {
	Allocated map[string]string `json:"allocated,omitempty"`
	Used      int               `json:"used"`
	Available int               `json:"available"`
}

// VMNetworkConfig mirrors network.harvesterhci.io/v1alpha1 VirtualMachineNetworkConfig: the controller makes one
// per VM, named after it and owned by it (pkg/controller/vm/common.go, prepareVmNetCfg), with a network config per
// NIC that has a MAC address on a Multus network, and records each NIC's lease in its status.
type VMNetworkConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VMNetworkConfigSpec   `json:"spec"`
	Status            VMNetworkConfigStatus `json:"status,omitempty"`
}

// VMNetworkConfigSpec mirrors VirtualMachineNetworkConfigSpec.
type VMNetworkConfigSpec struct {
	VMName         string          `json:"vmName"`
	NetworkConfigs []NetworkConfig `json:"networkConfigs,omitempty"`
}

// NetworkConfig mirrors NetworkConfig: IPAddress is the address a static-ip annotation asks for.
type NetworkConfig struct {
	NetworkName string  `json:"networkName"`
	MACAddress  string  `json:"macAddress"`
	IPAddress   *string `json:"ipAddress,omitempty"`
}

// VMNetworkConfigStatus mirrors VirtualMachineNetworkConfigStatus.
type VMNetworkConfigStatus struct {
	NetworkConfigs []NetworkConfigStatus `json:"networkConfigs,omitempty"`
	Conditions     []Condition           `json:"conditions,omitempty"`
}

// NetworkConfigStatus mirrors NetworkConfigStatus: one NIC's lease.
type NetworkConfigStatus struct {
	AllocatedIPAddress string `json:"allocatedIPAddress,omitempty"`
	MACAddress         string `json:"macAddress,omitempty"`
	NetworkName        string `json:"networkName,omitempty"`
	State              string `json:"state,omitempty"`
}
