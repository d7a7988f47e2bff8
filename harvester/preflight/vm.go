package preflight

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// The checks read the VM the create sends, --harvester-vm-patch applied, not the flags: a patch may give it other
// memory, cores, devices or networks (harvester/harvester#8408; vm-options.md says the patch wins). A problem is
// filed under the flag that made the part when the VM holds it as the flag made it, else under
// --harvester-vm-patch.

// vmNetwork is a network of the VM's template (a bridge on a VM network: Multus).
type vmNetwork struct {
	nic     string     // the interface's name, nic-<i> for the flags'
	network config.Ref // the NetworkAttachmentDefinition
	flag    string     // the flag that made it
	bad     string     // why the VM's network name names no NetworkAttachmentDefinition, "" when it does
}

// vmNetworks lists the VM's Multus networks. A network name without a namespace is in the VM's, as KubeVirt reads
// it (kubevirt/kubevirt pkg/network/multus, the network's namespace defaulting to the VMI's).
func vmNetworks(m *objects.Machine) []vmNetwork {
	cfg, vm := m.Config(), m.VM
	var out []vmNetwork
	for _, n := range vm.Spec.Template.Spec.Networks {
		if n.Multus == nil {
			continue
		}
		ns, name, ok := strings.Cut(n.Multus.NetworkName, "/")
		if !ok {
			ns, name = vm.Namespace, n.Multus.NetworkName
		}
		net := vmNetwork{nic: n.Name, network: config.Ref{Namespace: ns, Name: name}, flag: config.FlagVMPatch}
		if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			net.bad = fmt.Sprintf("%s: network %q is no namespace/name of a VM network", n.Name, n.Multus.NetworkName)
		}
		for _, nic := range cfg.NICs {
			if nic.Name == n.Name && nic.Network != nil && *nic.Network == net.network {
				net.flag = nic.Flag
			}
		}
		out = append(out, net)
	}
	return out
}

// vmDevice is a device the VM passes through: a host device or a vGPU (both hostDevices since Harvester v1.8) or a
// GPU (gpus[], which a patch may add).
type vmDevice struct {
	name, deviceName string
	flag             string // the flag that asked for it
}

// vmDevices lists the devices the VM passes through, in its order.
func vmDevices(m *objects.Machine) []vmDevice {
	cfg, devices := m.Config(), m.VM.Spec.Template.Spec.Domain.Devices
	flagOf := func(name, deviceName string) string {
		for _, g := range cfg.VGPUs {
			if g.Name == name && g.DeviceName == deviceName {
				return config.FlagVGPUInfo
			}
		}
		for _, h := range cfg.HostDevices {
			if h.Name == name && h.DeviceName == deviceName {
				return config.FlagHostDeviceInfo
			}
		}
		return config.FlagVMPatch
	}
	var out []vmDevice
	for _, h := range devices.HostDevices {
		out = append(out, vmDevice{h.Name, h.DeviceName, flagOf(h.Name, h.DeviceName)})
	}
	for _, g := range devices.GPUs {
		out = append(out, vmDevice{g.Name, g.DeviceName, flagOf(g.Name, g.DeviceName)})
	}
	return out
}

// vmResources are what the VM's template asks of CPU and memory, as KubeVirt gives its virt-launcher pod's compute
// container (kubevirt/kubevirt pkg/virt-controller/services/renderresources.go) and Harvester's VM mutator
// derives its requests from (harvester/harvester pkg/webhook/resources/virtualmachine/mutator.go).
type vmResources struct {
	cpu, memory         *resource.Quantity // domain.resources.limits; nil when the VM sets none
	cpuFlag, memoryFlag string             // the flags that set them
	pinned              bool               // dedicated CPUs: not overcommitted
	devices             bool               // host devices or vGPUs: its memory is not overcommitted
	// reserved is the memory Harvester's mutator reserves (the VM's harvesterhci.io/reservedMemory,
	// --harvester-reserved-memory-size); nil when the VM does not say.
	reserved *resource.Quantity
	// unreadable says why a quantity of the VM cannot be counted ("" when every one can).
	unreadable string
}

// vmResourcesOf reads the VM's resources. A quantity beyond what a Kubernetes quantity holds (kube.QuantityInRange)
// or negative is not counted, and said so (unreadable).
func vmResourcesOf(m *objects.Machine) vmResources {
	cfg, vm := m.Config(), m.VM
	spec := vm.Spec.Template.Spec
	r := vmResources{cpuFlag: config.FlagCPUCount, memoryFlag: config.FlagMemorySize, devices: len(vmDevices(m)) > 0}
	if c := spec.Domain.CPU; c != nil {
		r.pinned = c.DedicatedCPUPlacement
	}
	read := func(field string, q resource.Quantity, ok bool) *resource.Quantity {
		if !ok {
			return nil
		}
		if err := kube.QuantityInRange(q); err != nil {
			r.unreadable = fmt.Sprintf("the VM's %s %v", field, err)
			return nil
		}
		if q.Sign() < 0 {
			r.unreadable = fmt.Sprintf("the VM's %s %s is negative", field, quantity(q))
			return nil
		}
		return &q
	}
	limits := spec.Domain.Resources.Limits
	cpu, hasCPU := limits["cpu"]
	mem, hasMem := limits["memory"]
	r.cpu = read("spec.template.spec.domain.resources.limits[cpu]", cpu, hasCPU)
	if r.cpu != nil && r.cpu.Cmp(*resource.NewQuantity(config.MaxCPUs, resource.DecimalSI)) > 0 {
		r.unreadable, r.cpu = fmt.Sprintf("the VM's spec.template.spec.domain.resources.limits[cpu] %s is more cores than a VM has (%d)", quantity(cpu), int64(config.MaxCPUs)), nil
	}
	r.memory = read("spec.template.spec.domain.resources.limits[memory]", mem, hasMem)
	if r.cpu == nil || r.cpu.Cmp(*resource.NewQuantity(int64(cfg.CPUs), resource.DecimalSI)) != 0 {
		r.cpuFlag = config.FlagVMPatch
	}
	if r.memory == nil || r.memory.Cmp(*resource.NewQuantity(int64(cfg.MemoryGiB)<<30, resource.BinarySI)) != 0 {
		r.memoryFlag = config.FlagVMPatch
	}
	if v, ok := vm.Annotations[config.AnnotationReservedMemory]; ok {
		q, err := resource.ParseQuantity(v) // its form was bounded when the patched VM was read (objects.readVM)
		if err != nil {
			r.unreadable = fmt.Sprintf("the VM's annotation %s %q is not a quantity", config.AnnotationReservedMemory, v)
		} else {
			r.reserved = read("annotation "+config.AnnotationReservedMemory, q, true)
		}
	}
	return r
}
