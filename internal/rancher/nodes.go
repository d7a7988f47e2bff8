package rancher

import (
	"encoding/json"
	"strings"
)

// PoolNodes is what a pool of a provisioning cluster says of the nodes its machines become (cluster_types.go,
// RKEMachinePool, and the RKECommonNodeConfig it inlines, rke.cattle.io/v1 rkemachine_types.go).
type PoolNodes struct {
	EtcdRole, ControlPlaneRole, WorkerRole bool
	// Labels and Taints are the pool's node labels and taints: toMachineTemplate's caller machineDeployments
	// (pkg/controllers/provisioningv2/provisioningcluster/template.go) writes them into the rke.cattle.io/labels
	// and rke.cattle.io/taints annotations of the MachineDeployment's machine template, and the planner gives
	// them to the node's kubelet (pkg/capr/planner config.go addLabels: node-label; planner.go getTaints:
	// node-taint). v2.13.0 to v2.15.0 alike.
	Labels map[string]string
	Taints []Taint
	// AutoscalingMinSize and AutoscalingMaxSize are the pool's autoscaler bounds, nil when not set; Rancher
	// autoscales a pool only with both (pkg/capr/common.go AutoscalerEnabledByProvisioningCluster, and the CRD's
	// rule that both are set or neither).
	AutoscalingMinSize, AutoscalingMaxSize *int32
	// MachineDeploymentAnnotations are the annotations Rancher gives the pool's MachineDeployment
	// (machineDeployments, template.go: the pool's map, then the autoscaler's min and max size).
	MachineDeploymentAnnotations map[string]string
}

// Autoscales reports whether Rancher's cluster autoscaler scales the pool: it has both bounds.
func (n PoolNodes) Autoscales() bool {
	return n.AutoscalingMinSize != nil && n.AutoscalingMaxSize != nil
}

// Taint is a node taint as a pool holds it (corev1.Taint; timeAdded is not read).
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// ClusterRuns is what the cluster says every machine of it runs.
type ClusterRuns struct {
	// K3s: the cluster's kubernetesVersion is a K3s one (pkg/capr GetRuntime: the version names k3s).
	K3s bool
	// CloudProvider is the cloud-provider-name every machine gets: machineGlobalConfig's, then that of each
	// machineSelectorConfig entry without a selector, which applies to every machine (the planner merges them in
	// that order, pkg/capr/planner/config.go addUserConfig). CloudProviderKnown is false when an entry with a
	// selector sets one, or a value is not a string: then it depends on the machine.
	CloudProvider      string
	CloudProviderKnown bool
}

// poolNodesObject is the part of a pool's JSON PoolNodes holds.
type poolNodesObject struct {
	EtcdRole                     bool              `json:"etcdRole"`
	ControlPlaneRole             bool              `json:"controlPlaneRole"`
	WorkerRole                   bool              `json:"workerRole"`
	Labels                       map[string]string `json:"labels"`
	Taints                       []Taint           `json:"taints"`
	AutoscalingMinSize           *int32            `json:"autoscalingMinSize"`
	AutoscalingMaxSize           *int32            `json:"autoscalingMaxSize"`
	MachineDeploymentAnnotations map[string]string `json:"machineDeploymentAnnotations"`
}

func (o poolNodesObject) nodes() PoolNodes {
	return PoolNodes{
		EtcdRole: o.EtcdRole, ControlPlaneRole: o.ControlPlaneRole, WorkerRole: o.WorkerRole,
		Labels: o.Labels, Taints: o.Taints,
		AutoscalingMinSize: o.AutoscalingMinSize, AutoscalingMaxSize: o.AutoscalingMaxSize,
		MachineDeploymentAnnotations: o.MachineDeploymentAnnotations,
	}
}

// clusterRunsObject is the part of spec.rkeConfig ClusterRuns reads: the config of every machine
// (machineGlobalConfig) and of the machines a selector picks (machineSelectorConfig), as rke.cattle.io/v1
// RKEClusterSpecCommon holds them.
type clusterRunsObject struct {
	MachineGlobalConfig   map[string]json.RawMessage `json:"machineGlobalConfig"`
	MachineSelectorConfig []struct {
		MachineLabelSelector json.RawMessage            `json:"machineLabelSelector"`
		Config               map[string]json.RawMessage `json:"config"`
	} `json:"machineSelectorConfig"`
}

// cloudProviderName is the key of the distribution's config that names its cloud provider.
const cloudProviderName = "cloud-provider-name"

// cloudProvider is the cloud-provider-name of every machine, and whether it is known (ClusterRuns).
func (o clusterRunsObject) cloudProvider() (name string, known bool) {
	known = true
	set := func(raw json.RawMessage) {
		if raw == nil {
			return
		}
		if err := json.Unmarshal(raw, &name); err != nil {
			known = false
		}
	}
	set(o.MachineGlobalConfig[cloudProviderName])
	for _, entry := range o.MachineSelectorConfig {
		raw, ok := entry.Config[cloudProviderName]
		switch {
		case !ok:
		case len(entry.MachineLabelSelector) == 0 || string(entry.MachineLabelSelector) == "null":
			set(raw)
		default:
			known = false
		}
	}
	if !known {
		name = ""
	}
	return name, known
}

// isK3s is GetRuntime (pkg/capr/common.go): a version naming k3s is K3s, any other RKE2.
func isK3s(version string) bool { return strings.Contains(version, "k3s") }
