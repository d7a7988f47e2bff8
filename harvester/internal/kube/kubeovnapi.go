package kube

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VM networks and Kube-OVN's Subnets, as far as the pre-flight reads them. A Harvester VM network is a Multus
// NetworkAttachmentDefinition: a Linux bridge (types L2VlanNetwork, UntaggedNetwork, L2VlanTrunkNetwork), or, on
// Harvester 1.6 and later with the kubeovn-operator add-on, a Kube-OVN overlay network (type OverlayNetwork), whose
// VMs get their addresses from the Kube-OVN Subnet of the network's provider.

// Networks are Harvester's VM networks.
var Networks = kind[NetworkAttachmentDefinition](schema.GroupVersion{Group: "k8s.cni.cncf.io", Version: "v1"},
	"NetworkAttachmentDefinition", "network-attachment-definitions")

// NetworkAttachmentDefinition mirrors k8s.cni.cncf.io/v1 NetworkAttachmentDefinition
// (github.com/k8snetworkplumbingwg/network-attachment-definition-client pkg/apis/k8s.cni.cncf.io/v1/types.go): the
// CNI configuration is a JSON document in a string.
type NetworkAttachmentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Config string `json:"config"`
	} `json:"spec"`
}

// maxNetworkConfig bounds the CNI configuration the driver parses: Harvester's are a few hundred bytes.
const maxNetworkConfig = 64 << 10

// cniTypeKubeOVN is the CNI type of a Kube-OVN network (kube-ovn pkg/util/const.go CniTypeName).
const cniTypeKubeOVN = "kube-ovn"

// KubeOVNProvider is the Kube-OVN provider of the network, and whether it is a Kube-OVN network at all. Kube-OVN
// takes a NetworkAttachmentDefinition whose CNI type, or one of whose plugins', is kube-ovn (kube-ovn
// pkg/util/network_attachment.go IsOvnNetwork), and names its provider <name>.<namespace>.ovn, whatever the
// configuration says (pkg/controller/pod.go getPodAttachmentNet); Harvester writes that same provider into the
// configuration of an overlay network (harvester-ui-extension pkg/harvester/edit/
// harvesterhci.io.networkattachmentdefinition.vue) and refuses another (network-controller-harvester
// pkg/webhook/nad/validator.go checkNadConfig). A configuration that is no JSON, or larger than any Harvester
// writes, is an error.
func (n *NetworkAttachmentDefinition) KubeOVNProvider() (string, bool, error) {
	if len(n.Spec.Config) > maxNetworkConfig {
		return "", false, fmt.Errorf("network %s/%s: its CNI configuration holds %d bytes, more than the %d any Harvester network has",
			n.Namespace, n.Name, len(n.Spec.Config), maxNetworkConfig)
	}
	var conf struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(n.Spec.Config), &conf); err != nil {
		return "", false, fmt.Errorf("network %s/%s: its CNI configuration is no JSON document: %w", n.Namespace, n.Name, err)
	}
	ovn := conf.Type == cniTypeKubeOVN
	for _, p := range conf.Plugins {
		ovn = ovn || p.Type == cniTypeKubeOVN
	}
	if !ovn {
		return "", false, nil
	}
	return n.Name + "." + n.Namespace + ".ovn", true, nil
}

// The fields of Kube-OVN's Subnet the pre-flight reads, mirrored from github.com/kubeovn/kube-ovn
// pkg/apis/kubeovn/v1/subnet.go and condition.go at v1.14.10, the version github.com/harvester/harvester's go.mod
// requires (its webhooks read Subnets with it); the module is not linked, its API package alone pulls in
// Kube-OVN's own. A Subnet is cluster-scoped (+genclient:nonNamespaced). TestSubnetMirrorMatchesTheCRD pins these
// types to the CRD of that version, which the test bed installs.

// KubeOVNGroupVersion is the API group and version of Kube-OVN's resources.
var KubeOVNGroupVersion = schema.GroupVersion{Group: "kubeovn.io", Version: "v1"}

// Subnets are Kube-OVN's Subnets.
var Subnets = kind[Subnet](KubeOVNGroupVersion, "Subnet", "subnets")

// Subnet mirrors kubeovn.io/v1 Subnet: an address block Kube-OVN gives out to the NICs of its provider's network.
type Subnet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SubnetSpec   `json:"spec"`
	Status            SubnetStatus `json:"status"`
}

// SubnetSpec mirrors SubnetSpec's fields the pre-flight reads.
type SubnetSpec struct {
	// Protocol is IPv4, IPv6 or Dual; Kube-OVN sets it from the CIDR when it is empty (formatSubnet).
	Protocol string `json:"protocol,omitempty"`
	// CIDRBlock is the block, two comma-separated for Dual.
	CIDRBlock string `json:"cidrBlock"`
	Gateway   string `json:"gateway"`
	// ExcludeIps are addresses (or first..last ranges) never given out; Kube-OVN adds the gateway.
	ExcludeIps []string `json:"excludeIps,omitempty"`
	// Provider names the network: <name>.<namespace>.ovn.
	Provider string `json:"provider,omitempty"`
	// EnableDHCP makes Kube-OVN answer the guest's DHCP with its address: without it the guest gets none.
	EnableDHCP bool `json:"enableDHCP,omitempty"`
}

// SubnetStatus mirrors SubnetStatus's counts of addresses (Kube-OVN writes them as JSON numbers: float64) and its
// conditions.
type SubnetStatus struct {
	Conditions     []SubnetCondition `json:"conditions,omitempty"`
	V4AvailableIPs float64           `json:"v4availableIPs"`
	V4UsingIPs     float64           `json:"v4usingIPs"`
	V6AvailableIPs float64           `json:"v6availableIPs"`
	V6UsingIPs     float64           `json:"v6usingIPs"`
}

// SubnetCondition mirrors Condition: Ready, Validated, Error, …; status True, False or Unknown.
type SubnetCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}
