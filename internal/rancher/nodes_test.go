package rancher

import (
	"reflect"
	"strings"
	"testing"
)

// A pool as Rancher's cluster form saves one that autoscales (rancher/dashboard shell/edit/provisioning.cattle.io.cluster
// MachinePool.vue: labels, taints, autoscalingMinSize and autoscalingMaxSize), with the cloud provider the form
// puts in the selector-less machineSelectorConfig entry (its agentConfig).
const autoscalingClusterJSON = `{
  "apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster", "metadata": {"name": "gc1"},
  "spec": {"kubernetesVersion": "v1.34.1+rke2r1", "rkeConfig": {
    "machineGlobalConfig": {"cni": "calico"},
    "machineSelectorConfig": [{"config": {"cloud-provider-name": "harvester", "protect-kernel-defaults": false}}],
    "machinePools": [
      {"name": "gpu", "workerRole": true, "quantity": 0, "autoscalingMinSize": 0, "autoscalingMaxSize": 5,
       "labels": {"team": "ml"}, "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
       "machineDeploymentAnnotations": {"capacity.cluster-autoscaler.kubernetes.io/cpu": "4"},
       "machineConfigRef": {"kind": "HarvesterConfig", "name": "nc-gpu"}},
      {"name": "cp", "etcdRole": true, "controlPlaneRole": true, "machineConfigRef": {"kind": "HarvesterConfig", "name": "nc-cp"}}
    ]}}}`

func TestParseClusterReadsThePoolsNodes(t *testing.T) {
	c, err := ParseCluster([]byte(autoscalingClusterJSON))
	if err != nil {
		t.Fatal(err)
	}
	if c.Runs != (ClusterRuns{CloudProvider: "harvester", CloudProviderKnown: true}) {
		t.Errorf("runs: %+v", c.Runs)
	}
	gpu := c.Pools[0].Nodes
	if !gpu.Autoscales() || *gpu.AutoscalingMinSize != 0 || *gpu.AutoscalingMaxSize != 5 || !gpu.WorkerRole || gpu.EtcdRole ||
		!reflect.DeepEqual(gpu.Labels, map[string]string{"team": "ml"}) || !reflect.DeepEqual(gpu.Taints, []Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}}) ||
		gpu.MachineDeploymentAnnotations["capacity.cluster-autoscaler.kubernetes.io/cpu"] != "4" {
		t.Errorf("pool gpu: %+v", gpu)
	}
	if cp := c.Pools[1].Nodes; cp.Autoscales() || !cp.EtcdRole || !cp.ControlPlaneRole || cp.WorkerRole {
		t.Errorf("pool cp: %+v", cp)
	}
	// One bound alone does not autoscale (the CRD refuses it; AutoscalerEnabledByProvisioningCluster wants both).
	one := int32(1)
	if (PoolNodes{AutoscalingMaxSize: &one}).Autoscales() {
		t.Error("a pool with a maximum alone autoscales")
	}
}

// The cloud provider every machine gets: machineGlobalConfig's, then the selector-less entries' (later wins);
// an entry with a selector that sets one makes it depend on the machine, and so does a value that is no string.
func TestClusterCloudProvider(t *testing.T) {
	for _, tc := range []struct {
		rke   string
		name  string
		known bool
	}{
		{`{}`, "", true},
		{`{"machineGlobalConfig": {"cloud-provider-name": "harvester"}}`, "harvester", true},
		{`{"machineGlobalConfig": {"cloud-provider-name": "harvester"}, "machineSelectorConfig": [{"config": {"cloud-provider-name": "external"}}]}`, "external", true},
		{`{"machineSelectorConfig": [{"machineLabelSelector": null, "config": {"cloud-provider-name": "harvester"}}]}`, "harvester", true},
		{`{"machineSelectorConfig": [{"config": {"cloud-provider-name": "harvester"}}, {"machineLabelSelector": {"matchLabels": {"a": "b"}}, "config": {"cloud-provider-name": "aws"}}]}`, "", false},
		{`{"machineSelectorConfig": [{"machineLabelSelector": {"matchLabels": {"a": "b"}}, "config": {"cni": "calico"}}]}`, "", true},
		{`{"machineGlobalConfig": {"cloud-provider-name": 3}}`, "", false},
	} {
		c, err := ParseCluster([]byte(`{"apiVersion":"provisioning.cattle.io/v1","kind":"Cluster","metadata":{"name":"c"},"spec":{"kubernetesVersion":"v1.33.5+k3s1","rkeConfig":` + tc.rke + `}}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.rke, err)
		}
		if c.Runs != (ClusterRuns{K3s: true, CloudProvider: tc.name, CloudProviderKnown: tc.known}) {
			t.Errorf("%s: %+v, want %q known %v", tc.rke, c.Runs, tc.name, tc.known)
		}
	}
}

// A pool's labels, taints and bounds of the wrong type are refused naming the field, never quoting the value.
func TestParseClusterRefusesWrongNodeFields(t *testing.T) {
	for field, value := range map[string]string{"labels": `{"a": 1}`, "taints": `{"key": "a"}`, "autoscalingMinSize": `"zero"`, "autoscalingMaxSize": `99999999999`} {
		_, err := ParseCluster([]byte(`{"apiVersion":"provisioning.cattle.io/v1","kind":"Cluster","spec":{"rkeConfig":{"machinePools":[{"name":"p","` + field + `":` + value + `}]}}}`))
		if err == nil || !strings.Contains(err.Error(), field) || strings.Contains(err.Error(), "zero") {
			t.Errorf("%s: %v", field, err)
		}
	}
}
