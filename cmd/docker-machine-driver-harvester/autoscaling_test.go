package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// autoscalingCluster is cluster gc8 with pool1 autoscaling from zero, as Rancher's cluster form saves it
// (rancher/rancher pkg/apis/provisioning.cattle.io/v1/cluster_types.go RKEMachinePool: labels, taints,
// autoscalingMinSize, autoscalingMaxSize, machineDeploymentAnnotations), on Harvester's cloud provider.
const autoscalingCluster = `apiVersion: provisioning.cattle.io/v1
kind: Cluster
metadata:
  name: gc8
  namespace: fleet-default
spec:
  kubernetesVersion: v1.34.1+rke2r1
  rkeConfig:
    machineSelectorConfig:
    - config:
        cloud-provider-name: harvester
    machinePools:
    - name: pool1
      quantity: 0
      workerRole: true
      autoscalingMinSize: 0
      autoscalingMaxSize: 5
      labels:
        team: ml
      taints:
      - key: gpu
        value: "true"
        effect: NoSchedule
      machineDeploymentAnnotations:
        example.com/owner: ml
      machineConfigRef:
        kind: HarvesterConfig
        name: nc-gc8-pool1-q99l7
`

// check --machine-config --cluster prints, after the checks, the pool's machineDeploymentAnnotations as YAML
// that pastes under the pool: the pool's own annotation kept, the capacity of the machine config (4 cores, 8 GiB
// less 100Mi, the 40 GiB image disk), the pool's labels with the worker role's, its taints.
func TestCheckPrintsThePoolsAutoscalingAnnotations(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pool.yaml": strings.Replace(poolYAML, "machineType: q35\n", "", 1), "cluster.yaml": autoscalingCluster})
	stdout, _, _ := runVerb(t, unreachableHarvester, "check", "--machine-name", "m1", "--machine-config", filepath.Join(dir, "pool.yaml"),
		"--cluster", filepath.Join(dir, "cluster.yaml"))
	_, snippet, ok := strings.Cut(stdout, "\n\n")
	if !ok || !strings.HasPrefix(snippet, "# Pool pool1 autoscales (autoscalingMinSize 0, autoscalingMaxSize 5): put this in place of its machineDeploymentAnnotations") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	var pasted struct {
		Annotations map[string]string `json:"machineDeploymentAnnotations"`
	}
	if err := yaml.UnmarshalStrict([]byte(snippet), &pasted); err != nil {
		t.Fatalf("the snippet is no YAML of machineDeploymentAnnotations: %v\n%s", err, snippet)
	}
	want := map[string]string{
		"example.com/owner":                                        "ml",
		"capacity.cluster-autoscaler.kubernetes.io/cpu":            "4",
		"capacity.cluster-autoscaler.kubernetes.io/memory":         "8092Mi",
		"capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk": "40Gi",
		"capacity.cluster-autoscaler.kubernetes.io/labels":         "node-role.kubernetes.io/worker=true,team=ml",
		"capacity.cluster-autoscaler.kubernetes.io/taints":         "gpu=true:NoSchedule",
	}
	if !reflect.DeepEqual(pasted.Annotations, want) {
		t.Errorf("annotations %v\nwant %v", pasted.Annotations, want)
	}
}

// Under the second name, the snippet names the second name's flags.
func TestAutoscalingSnippetNamesTheSecondNamesFlags(t *testing.T) {
	asDriver(t, "hcivm")
	_, stderr, code := runVerb(t, noEnv, "render", "--machine-name", "m1", "--hcivm-image-name", "img", "--hcivm-disk-size", "10", "--hcivm-network-name", "net")
	if code != 0 || !strings.Contains(stderr, "less 100Mi, reserved without --hcivm-reserved-memory-size") || strings.Contains(stderr, "--harvester-") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
