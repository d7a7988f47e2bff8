// Package autoscale computes the annotations a machine pool's MachineDeployment needs for the cluster autoscaler to
// grow it from zero machines: with no node of the pool to look at, the autoscaler's clusterapi provider builds the
// node a new machine would become from the MachineDeployment's capacity.cluster-autoscaler.kubernetes.io/*
// annotations (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi, clusterapi_nodegroup.go
// TemplateNodeInfo; without cpu and memory, CanScaleFromZero is false and the pool never grows). Rancher copies a
// pool's machineDeploymentAnnotations onto its MachineDeployment (rancher/rancher
// pkg/controllers/provisioningv2/provisioningcluster/template.go, machineDeployments; v2.13.0 to v2.15.0).
//
// Each annotation is computed from the VirtualMachine a create sends (objects.Machine's VM: the pure builders, after
// --harvester-vm-patch), the pool and what Harvester says of the host devices, and only where it can be known;
// each says how it was computed. It is pure: no client, clock or randomness.
package autoscale

import (
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// The annotations' keys, as the autoscaler's clusterapi provider reads them (clusterapi_utils.go, cpuKey …
// labelsKey; the same keys in cluster-autoscaler-1.32.0 to 1.35.0, the releases Rancher v2.13 to v2.15 deploy:
// pkg/controllers/capr/autoscaler/fleet.go, k8sVersionToAutoscalerChartVersions).
const (
	KeyCPU           = "capacity.cluster-autoscaler.kubernetes.io/cpu"
	KeyMemory        = "capacity.cluster-autoscaler.kubernetes.io/memory"
	KeyEphemeralDisk = "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk"
	KeyGPUCount      = "capacity.cluster-autoscaler.kubernetes.io/gpu-count"
	KeyGPUType       = "capacity.cluster-autoscaler.kubernetes.io/gpu-type"
	KeyMaxPods       = "capacity.cluster-autoscaler.kubernetes.io/maxPods"
	KeyLabels        = "capacity.cluster-autoscaler.kubernetes.io/labels"
	KeyTaints        = "capacity.cluster-autoscaler.kubernetes.io/taints"
)

// Prefix is what every capacity annotation's key starts with.
const Prefix = "capacity.cluster-autoscaler.kubernetes.io/"

// CloudProvider is what is known of the guest cluster's cloud provider, which alone labels a node with its
// host's zone and region.
type CloudProvider int

const (
	// CloudProviderUnknown: nothing says (render, check without --cluster, no drop-in of the driver's).
	CloudProviderUnknown CloudProvider = iota
	// CloudProviderHarvester: the guest cluster runs Harvester's cloud provider.
	CloudProviderHarvester
	// CloudProviderOther: the cluster names another cloud provider, or none.
	CloudProviderOther
)

// Pool is what the provisioning cluster says of the machine pool and its cluster (check --cluster).
type Pool struct {
	Name  string
	Nodes rancher.PoolNodes
	Runs  rancher.ClusterRuns
}

// Inputs are what the annotations depend on besides the VM.
type Inputs struct {
	// Pool is the machine pool; nil when it is not known (render, check without --cluster).
	Pool *Pool
	// CloudProvider is whether the guest cluster runs Harvester's cloud provider.
	CloudProvider CloudProvider
	// VGPUs are the resource names of the machine's vGPUs (--harvester-vgpu-info): a VM's host devices do not
	// tell a vGPU from a PCI device.
	VGPUs map[string]bool
	// PCIClasses maps a PCI device's resource name to its PCI class (PCIDevice status.classId, "0302"), as
	// Harvester's pcidevices-controller reports it; nil when not read (render never reads it).
	PCIClasses map[string]string
}

// Annotation is one annotation of the pool's MachineDeployment and how its value was computed.
type Annotation struct {
	Key, Value, How string
}

// Omitted is an annotation left out, and why.
type Omitted struct {
	Key, Why string
}

// Result is the annotations a pool of the VM needs, in the order the autoscaler's README lists them, and those
// left out.
type Result struct {
	Annotations []Annotation
	Omitted     []Omitted
}

// Compute returns the annotations for a pool whose machines are vm, with in.
func Compute(vm *kubevirtv1.VirtualMachine, in Inputs) Result {
	var r Result
	add := func(a *Annotation, o *Omitted) {
		if a != nil {
			r.Annotations = append(r.Annotations, *a)
		}
		if o != nil {
			r.Omitted = append(r.Omitted, *o)
		}
	}
	add(cpu(vm))
	add(memory(vm))
	add(ephemeralDisk(vm))
	count, kind, gpuOmitted := gpus(vm, in)
	add(count, nil)
	add(kind, nil)
	for i := range gpuOmitted {
		add(nil, &gpuOmitted[i])
	}
	add(nil, &Omitted{Key: KeyMaxPods, Why: maxPodsWhy})
	add(labels(vm, in))
	add(taints(in))
	return r
}

// maxPodsWhy says why maxPods is left out.
const maxPodsWhy = "the autoscaler takes 110 (clusterapi_unstructured.go InstanceCapacity), the kubelet's default max-pods; give it when the cluster's kubelet-arg sets max-pods"

// Value is the value of key, "" when the result has none.
func (r Result) Value(key string) string {
	for _, a := range r.Annotations {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// InputsFor are the inputs of a machine of cfg in pool (nil when not known), with the PCI classes Harvester gave
// (nil when not read): its vGPUs, and whether the guest cluster runs Harvester's cloud provider — the driver's
// RKE2 drop-in switches it on whatever the cluster says (config.yaml.d/90-…, read after Rancher's 50-rancher.yaml),
// else the cluster's cloud-provider-name says.
func InputsFor(cfg *config.Config, pool *Pool, pciClasses map[string]string) Inputs {
	in := Inputs{Pool: pool, VGPUs: map[string]bool{}, PCIClasses: pciClasses}
	for _, g := range cfg.VGPUs {
		in.VGPUs[g.DeviceName] = true
	}
	switch {
	case cfg.CloudProvider.DropIn && cfg.CloudProvider.Distribution == config.Distributions[config.DefaultDistribution]:
		in.CloudProvider = CloudProviderHarvester
	case pool == nil || !pool.Runs.CloudProviderKnown:
	case pool.Runs.CloudProvider == harvesterCloudProvider:
		in.CloudProvider = CloudProviderHarvester
	default:
		in.CloudProvider = CloudProviderOther
	}
	return in
}

// harvesterCloudProvider is the cloud-provider-name of Harvester's cloud provider in RKE2.
const harvesterCloudProvider = "harvester"
