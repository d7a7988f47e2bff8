package autoscale

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// machine is the config and the VM of machine m1 of a 40 GiB image disk with extra flags kv, the VM as a create
// sends it (objects.ParseConfig builds it: after --harvester-vm-patch).
func machine(t *testing.T, kv ...any) (*config.Config, *kubevirtv1.VirtualMachine) {
	t.Helper()
	cfg, m, err := objects.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), kv...))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg, m.VM
}

// compute is Compute for a machine of kv in pool.
func compute(t *testing.T, pool *Pool, pciClasses map[string]string, kv ...any) Result {
	t.Helper()
	cfg, vm := machine(t, kv...)
	return Compute(vm, InputsFor(cfg, pool, pciClasses))
}

// omitted is why key was left out, "" when it was not.
func (r Result) omitted(key string) string {
	var why []string
	for _, o := range r.Omitted {
		if o.Key == key {
			why = append(why, o.Why)
		}
	}
	return strings.Join(why, "; ")
}

// cpu is the VM's vCPUs, sockets × cores × threads as KubeVirt gives them, after the patch.
func TestCPU(t *testing.T) {
	if got := compute(t, nil, nil, config.FlagCPUCount, 4).Value(KeyCPU); got != "4" {
		t.Errorf("4 cores: %q", got)
	}
	r := compute(t, nil, nil, config.FlagCPUCount, 4, config.FlagVMPatch, `{"spec":{"template":{"spec":{"domain":{"cpu":{"sockets":2,"threads":2}}}}}}`)
	if got := r.Value(KeyCPU); got != "16" || !strings.Contains(r.Annotations[0].How, "domain.cpu: 2 × 4 × 2") {
		t.Errorf("2 sockets × 4 cores × 2 threads: %q, %+v", got, r.Annotations[0])
	}
}

// memory is the guest memory Harvester's mutator gives: the limit less the reserved memory, or less 100Mi.
func TestMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []any
		want string
		how  string
	}{
		{"without --harvester-reserved-memory-size: 100Mi less, the lower figure", []any{config.FlagMemorySize, 8}, "8092Mi", "the limit 8Gi less 100Mi"},
		{"with it: exactly that less", []any{config.FlagMemorySize, 8, config.FlagReservedMemorySize, 512}, "7680Mi", "the limit 8Gi less 512Mi reserved"},
		{"a patched limit", []any{config.FlagVMPatch, `{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":"6Gi"}}}}}}}`}, "6044Mi", "the limit 6Gi less 100Mi"},
		{"a reserved memory patched in, not of whole MiB", []any{config.FlagVMPatch, `{"metadata":{"annotations":{"harvesterhci.io/reservedMemory":"100M"}}}`}, "4194967296", "the limit 4Gi less 100M reserved"},
		{"hot-plug keeps the VM's guest memory", []any{config.FlagMemorySize, 8, config.FlagVMPatch,
			`{"metadata":{"annotations":{"harvesterhci.io/enableCPUAndMemoryHotplug":"true"}},"spec":{"template":{"spec":{"domain":{"memory":{"guest":"6Gi"}}}}}}`}, "6044Mi", "the guest memory 6Gi less 100Mi"},
	} {
		r := compute(t, nil, nil, tc.kv...)
		var how string
		for _, a := range r.Annotations {
			if a.Key == KeyMemory {
				how = a.How
			}
		}
		if got := r.Value(KeyMemory); got != tc.want || !strings.Contains(how, tc.how) {
			t.Errorf("%s: %q (%s), want %q (%s)", tc.name, got, how, tc.want, tc.how)
		}
	}
	r := compute(t, nil, nil, config.FlagVMPatch, `{"metadata":{"annotations":{"harvesterhci.io/reservedMemory":"lots"}}}`)
	if r.Value(KeyMemory) != "" || !strings.Contains(r.omitted(KeyMemory), "Harvester refuses the VM") {
		t.Errorf("an unreadable reserved memory: %+v", r)
	}
}

// ephemeral-disk is the root disk's size: the first to boot, when cloned from an image.
func TestEphemeralDisk(t *testing.T) {
	if got := compute(t, nil, nil).Value(KeyEphemeralDisk); got != "40Gi" {
		t.Errorf("one 40 GiB image disk: %q", got)
	}
	disks := `{"disks":[{"storageClassName":"longhorn","size":100,"bootOrder":2},{"imageName":"default/ubuntu","size":30,"bootOrder":1}]}`
	if got := compute(t, nil, nil, config.FlagDiskInfo, disks).Value(KeyEphemeralDisk); got != "30Gi" {
		t.Errorf("the image disk boots first: %q", got)
	}
	for _, tc := range []struct{ disks, nics, why string }{
		{`{"disks":[{"storageClassName":"longhorn","size":100,"bootOrder":1}]}`, "", "a blank disk"},
		{`{"disks":[{"imageName":"default/iso","size":5,"type":"cd-rom","bootOrder":1},{"storageClassName":"longhorn","size":100,"bootOrder":2}]}`, "", "boots from CD-ROM disk-0"},
		{`{"disks":[{"imageName":"default/ubuntu","size":30,"bootOrder":2}]}`, `{"interfaces":[{"networkName":"default/vlan1","bootOrder":1}]}`, "boots from the network first (interface nic-0)"},
	} {
		kv := []any{config.FlagDiskInfo, tc.disks}
		if tc.nics != "" {
			kv = append(kv, config.FlagNetworkInfo, tc.nics)
		}
		r := compute(t, nil, nil, kv...)
		if r.Value(KeyEphemeralDisk) != "" || !strings.Contains(r.omitted(KeyEphemeralDisk), tc.why) {
			t.Errorf("%s: %q, omitted %q", tc.disks, r.Value(KeyEphemeralDisk), r.omitted(KeyEphemeralDisk))
		}
	}
}

// gpu-count counts vGPUs and the PCI devices Harvester classes as display controllers; gpu-type is NVIDIA's
// device plugin's resource, for NVIDIA's devices alone.
func TestGPUs(t *testing.T) {
	vgpu := `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`
	hostDevices := `{"hostDevices":[{"name":"pci1","deviceName":"nvidia.com/GA102GL_A10"},{"name":"nic1","deviceName":"intel.com/ETHERNET_X710"}]}`
	r := compute(t, nil, nil, config.FlagVGPUInfo, vgpu)
	if r.Value(KeyGPUCount) != "1" || r.Value(KeyGPUType) != "nvidia.com/gpu" {
		t.Errorf("one vGPU: %+v", r.Annotations)
	}
	// render does not know the PCI classes: the devices are not counted, and it says so.
	r = compute(t, nil, nil, config.FlagVGPUInfo, vgpu, config.FlagHostDeviceInfo, hostDevices)
	if r.Value(KeyGPUCount) != "1" || !strings.Contains(r.omitted(KeyGPUCount), "host devices pci1 (nvidia.com/GA102GL_A10), nic1 (intel.com/ETHERNET_X710) not counted") {
		t.Errorf("classes unknown: %+v %+v", r.Annotations, r.Omitted)
	}
	classes := map[string]string{"nvidia.com/GA102GL_A10": "0302", "intel.com/ETHERNET_X710": "0200"}
	r = compute(t, nil, classes, config.FlagVGPUInfo, vgpu, config.FlagHostDeviceInfo, hostDevices)
	if r.Value(KeyGPUCount) != "2" || r.Value(KeyGPUType) != "nvidia.com/gpu" || r.omitted(KeyGPUCount) != "" {
		t.Errorf("a 3D controller and a NIC: %+v %+v", r.Annotations, r.Omitted)
	}
	r = compute(t, nil, map[string]string{"amd.com/MI210": "0380"}, config.FlagHostDeviceInfo, `{"hostDevices":[{"name":"pci1","deviceName":"amd.com/MI210"}]}`)
	if r.Value(KeyGPUCount) != "1" || r.Value(KeyGPUType) != "" || !strings.Contains(r.omitted(KeyGPUType), "not every GPU is NVIDIA's") {
		t.Errorf("an AMD GPU: %+v %+v", r.Annotations, r.Omitted)
	}
	if r := compute(t, nil, nil); r.Value(KeyGPUCount) != "" || r.Value(KeyGPUType) != "" {
		t.Errorf("no devices: %+v", r.Annotations)
	}
}

// workerPool is an autoscaling worker pool of a cluster running Harvester's cloud provider.
func workerPool() *Pool {
	zero, five := int32(0), int32(5)
	return &Pool{Name: "gpu", Runs: rancher.ClusterRuns{CloudProvider: "harvester", CloudProviderKnown: true},
		Nodes: rancher.PoolNodes{WorkerRole: true, AutoscalingMinSize: &zero, AutoscalingMaxSize: &five,
			Labels: map[string]string{"team": "ml", "bad key": "x"},
			Taints: []rancher.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}, {Key: "dedicated", Effect: "NoExecute"}, {Key: "x", Effect: "Sometimes"}},
			MachineDeploymentAnnotations: map[string]string{"example.com/owner": "ml", KeyCPU: "2", KeyMaxPods: "200",
				"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0"}}}
}

// labels are the pool's, the worker role's, and the zone and region the VM is held to when Harvester's cloud
// provider runs; in the autoscaler's "k=v,k=v" form.
func TestLabels(t *testing.T) {
	r := compute(t, workerPool(), nil, config.FlagZone, "zone-a")
	want := "failure-domain.beta.kubernetes.io/zone=zone-a,node-role.kubernetes.io/worker=true,team=ml,topology.kubernetes.io/zone=zone-a"
	if got := r.Value(KeyLabels); got != want || !strings.Contains(r.omitted(KeyLabels), "labels bad key left out") {
		t.Errorf("a worker pool held to zone-a: %q, omitted %q; want %q", got, r.omitted(KeyLabels), want)
	}
	// Two zones, or a zone the patch's affinity term does not hold: not known.
	for _, kv := range [][]any{{config.FlagZone, "zone-a,zone-b"}, {config.FlagVMAffinity, `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["h1"]}]},{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a"]}]}]}}}`}} {
		if got := compute(t, workerPool(), nil, kv...).Value(KeyLabels); strings.Contains(got, "zone") {
			t.Errorf("%v: %q", kv, got)
		}
	}
	// A nodeSelector of the patch holds it too; the region likewise.
	r = compute(t, workerPool(), nil, config.FlagRegion, "eu", config.FlagVMPatch, `{"spec":{"template":{"spec":{"nodeSelector":{"topology.kubernetes.io/zone":"zone-c"}}}}}`)
	if got := r.Value(KeyLabels); !strings.Contains(got, "topology.kubernetes.io/zone=zone-c") || !strings.Contains(got, "topology.kubernetes.io/region=eu") {
		t.Errorf("nodeSelector and region: %q", got)
	}
	// Without the pool, the cloud provider is not known: no zone, and it says why.
	r = compute(t, nil, nil, config.FlagZone, "zone-a")
	if r.Value(KeyLabels) != "" || !strings.Contains(r.omitted(KeyLabels), "give check --cluster") {
		t.Errorf("no pool: %+v", r)
	}
	// The driver's RKE2 drop-in switches the cloud provider on: the zone is known without the pool.
	r = compute(t, nil, nil, config.FlagZone, "zone-a", config.FlagCloudProviderConfig, configtest.Kubeconfig, config.FlagCloudProviderDropIn, true)
	if got := r.Value(KeyLabels); got != "failure-domain.beta.kubernetes.io/zone=zone-a,topology.kubernetes.io/zone=zone-a" {
		t.Errorf("the driver's drop-in: %q", got)
	}
	other := workerPool()
	other.Runs.CloudProvider = "external"
	if r := compute(t, other, nil, config.FlagZone, "zone-a"); strings.Contains(r.Value(KeyLabels), "zone") || !strings.Contains(r.omitted(KeyLabels), "does not run Harvester's cloud provider") {
		t.Errorf("another cloud provider: %+v", r)
	}
}

// taints are the pool's, and the roles' for a pool without the worker role, in the autoscaler's form.
func TestTaints(t *testing.T) {
	r := compute(t, workerPool(), nil)
	if got := r.Value(KeyTaints); got != "gpu=true:NoSchedule,dedicated:NoExecute" || !strings.Contains(r.omitted(KeyTaints), "taints x left out") {
		t.Errorf("a worker pool: %q, omitted %q", got, r.omitted(KeyTaints))
	}
	for _, tc := range []struct {
		k3s  bool
		want string
	}{
		{false, "node-role.kubernetes.io/etcd:NoExecute,node-role.kubernetes.io/control-plane:NoSchedule"},
		{true, "node-role.kubernetes.io/control-plane:NoSchedule"},
	} {
		cp := &Pool{Name: "cp", Runs: rancher.ClusterRuns{K3s: tc.k3s}, Nodes: rancher.PoolNodes{EtcdRole: true, ControlPlaneRole: true}}
		if got := compute(t, cp, nil).Value(KeyTaints); got != tc.want {
			t.Errorf("etcd and control plane, K3s %v: %q, want %q", tc.k3s, got, tc.want)
		}
	}
	if r := compute(t, nil, nil); r.Value(KeyTaints) != "" || !strings.Contains(r.omitted(KeyTaints), "give check --cluster") {
		t.Errorf("no pool: %+v", r)
	}
}

// The snippets: a node template alone, an autoscaling pool (its own annotations kept, the capacity ones in place
// of its own), a pool that does not autoscale; a pool name holding a newline stays in its comment.
func TestSnippetGolden(t *testing.T) {
	args := []any{config.FlagCPUCount, 8, config.FlagMemorySize, 32, config.FlagZone, "zone-a",
		config.FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`,
		config.FlagHostDeviceInfo, `{"hostDevices":[{"name":"pci1","deviceName":"nvidia.com/GA102GL_A10"}]}`}
	cfg, vm := machine(t, args...)
	alone := InputsFor(cfg, nil, nil)
	golden.Assert(t, "template.yaml", Compute(vm, alone).Snippet(alone))

	pooled := InputsFor(cfg, workerPool(), map[string]string{"nvidia.com/GA102GL_A10": "0302"})
	golden.Assert(t, "pool.yaml", Compute(vm, pooled).Snippet(pooled))

	still := workerPool()
	still.Name = "static\npool"
	still.Nodes.AutoscalingMinSize, still.Nodes.AutoscalingMaxSize = nil, nil
	in := InputsFor(cfg, still, nil)
	out := Compute(vm, in).Snippet(in)
	golden.Assert(t, "static.yaml", out)
	if strings.Contains(string(out), "\npool") {
		t.Error("a newline of the pool's name left its comment")
	}
}

// The autoscaler reads every value as it parses them (kubernetes/autoscaler cluster-autoscaler/cloudprovider/
// clusterapi, cluster-autoscaler-1.34.0 to 1.35.0): cpu, memory and ephemeral-disk with resource.ParseQuantity
// (clusterapi_utils.go parseKey), gpu-count with strconv.ParseInt (parseIntKey), labels split on "," and then on
// the first "=" (clusterapi_unstructured.go Labels), taints split on "," and each by parseTaint: "key=value:effect"
// or "key:effect", the key a qualified name and the value a label value. A value the parser drops would be a
// capacity the autoscaler never sees.
func TestTheAutoscalerReadsThem(t *testing.T) {
	cfg, vm := machine(t, config.FlagCPUCount, 8, config.FlagMemorySize, 32, config.FlagZone, "zone-a", config.FlagReservedMemorySize, 300,
		config.FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`)
	r := Compute(vm, InputsFor(cfg, workerPool(), nil))
	for _, key := range []string{KeyCPU, KeyMemory, KeyEphemeralDisk} {
		q, err := resource.ParseQuantity(r.Value(key))
		if err != nil || q.IsZero() {
			t.Errorf("%s %q: %v", key, r.Value(key), err)
		}
	}
	if n, err := strconv.ParseInt(r.Value(KeyGPUCount), 10, 0); err != nil || n != 1 {
		t.Errorf("gpu-count %q: %v", r.Value(KeyGPUCount), err)
	}
	for _, label := range strings.Split(r.Value(KeyLabels), ",") {
		k, v, ok := strings.Cut(label, "=")
		if !ok || len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
			t.Errorf("label %q", label)
		}
	}
	taints := strings.Split(r.Value(KeyTaints), ",")
	for _, taint := range taints {
		parts := strings.Split(taint, ":")
		kv := strings.Split(parts[0], "=")
		if len(parts) != 2 || len(kv) > 2 || len(validation.IsQualifiedName(kv[0])) > 0 || len(kv) == 2 && len(validation.IsValidLabelValue(kv[1])) > 0 {
			t.Errorf("taint %q", taint)
		}
	}
	if len(taints) != 2 {
		t.Errorf("taints %v", taints)
	}
}
