package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The fields of Harvester's load-balancer IP pools the pre-flight reads, mirrored from
// github.com/harvester/harvester-load-balancer pkg/apis/loadbalancer.harvesterhci.io/v1beta1/ippool.go (IPPool,
// IPPoolSpec, Range, Selector, Tuple) at commit e861dc948324084793b8af7dee22451d8a0d619c. That module is not linked:
// the Go module proxy does not serve it. IPPool is cluster-scoped (its +genclient:nonNamespaced and
// +kubebuilder:resource scope=Cluster markers). TestIPPoolMirrorMatchesTheCRD pins these types to the CRD the test
// bed installs (e2e/crds), itself mirrored from that commit's crds/loadbalancer.harvesterhci.io_ippools.yaml.

// LoadBalancerGroupVersion is the API group and version of Harvester's load-balancer resources.
var LoadBalancerGroupVersion = schema.GroupVersion{Group: "loadbalancer.harvesterhci.io", Version: "v1beta1"}

// IPPools are Harvester's load-balancer IP pools.
var IPPools = kind[IPPool](LoadBalancerGroupVersion, "IPPool", "ippools")

// LabelGlobalIPPool set to "true" makes a pool the global one: it serves every load balancer no other pool
// matches, on any network (harvester-load-balancer pkg/utils/const.go KeyGlobalIPPool, read by pkg/ipam/selector.go
// Selector.Select).
const LabelGlobalIPPool = "loadbalancer.harvesterhci.io/global-ip-pool"

// IPPool mirrors loadbalancer.harvesterhci.io/v1beta1 IPPool: ranges of addresses Harvester's load balancer gives to
// load balancers (a guest cluster's LoadBalancer Services among them), and the selector that says whose.
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IPPoolSpec `json:"spec"`
}

// IPPoolSpec mirrors IPPoolSpec: description, and the status, are left out.
type IPPoolSpec struct {
	Ranges   []IPPoolRange  `json:"ranges"`
	Selector IPPoolSelector `json:"selector"`
}

// IPPoolRange mirrors Range: a subnet, and within it the first and last address given out (both inclusive; each
// defaults from the subnet when empty, see the pre-flight's lbRange).
type IPPoolRange struct {
	RangeStart string `json:"rangeStart,omitempty"`
	RangeEnd   string `json:"rangeEnd,omitempty"`
	Subnet     string `json:"subnet"`
	Gateway    string `json:"gateway,omitempty"`
}

// IPPoolSelector mirrors Selector: the network (a VM network as namespace/name) and the scopes whose load
// balancers the pool serves; priority is left out.
type IPPoolSelector struct {
	Network string        `json:"network,omitempty"`
	Scope   []IPPoolScope `json:"scope,omitempty"`
}

// IPPoolScope mirrors Tuple; "*" in a field matches any value.
type IPPoolScope struct {
	Project      string `json:"project,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	GuestCluster string `json:"guestCluster,omitempty"`
}
