package autoscale

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// cpu is the guest's vCPUs: KubeVirt gives the guest sockets × cores × threads of domain.cpu (an unset one
// counts 1), and the guest's kubelet counts every one as capacity.
func cpu(vm *kubevirtv1.VirtualMachine) (*Annotation, *Omitted) {
	c := vm.Spec.Template.Spec.Domain.CPU
	if c == nil || c.Sockets == 0 && c.Cores == 0 && c.Threads == 0 {
		return nil, &Omitted{Key: KeyCPU, Why: "the VM gives no CPU topology (domain.cpu): the guest's vCPUs are not known"}
	}
	one := func(n uint32) uint64 { return uint64(max(n, 1)) }
	n := one(c.Sockets) * one(c.Cores) * one(c.Threads)
	return &Annotation{Key: KeyCPU, Value: strconv.FormatUint(n, 10),
		How: fmt.Sprintf("the VM's vCPUs, sockets × cores × threads of its domain.cpu: %d × %d × %d; the guest's kubelet counts every one", one(c.Sockets), one(c.Cores), one(c.Threads))}, nil
}

// annotationHotplug is the VM annotation with which Harvester's mutator keeps a guest memory the VM gives
// (harvester/harvester pkg/util/virtualmachine SupportCPUAndMemoryHotplug).
const annotationHotplug = "harvesterhci.io/enableCPUAndMemoryHotplug"

// reservedDefault is what Harvester's mutator reserves of the memory for QEMU without the reserved-memory
// annotation, unless its additional-guest-memory-overhead-ratio setting is set (mutator.go memory100M).
const reservedDefault = 100 << 20

// memory is the guest memory Harvester's VM mutator writes into domain.memory.guest (harvester/harvester v1.8.2
// pkg/webhook/resources/virtualmachine/mutator.go generateMemoryPatch): the memory limit — or, with CPU and memory
// hot-plug on, the guest memory the VM gives — less the harvesterhci.io/reservedMemory annotation
// (--harvester-reserved-memory-size), or without it less 100 MiB unless the additional-guest-memory-overhead-ratio
// setting is set (its default "1.5" from Harvester v1.5.0, pkg/settings/settings_helper.go; cleared, "0" or
// empty, it is not). KubeVirt gives the guest domain.memory.guest; its own overhead goes on the virt-launcher
// pod's request, not into the guest. The setting is not read: the lower figure is given.
func memory(vm *kubevirtv1.VirtualMachine) (*Annotation, *Omitted) {
	spec := vm.Spec.Template.Spec.Domain
	base, from := spec.Resources.Limits[corev1.ResourceMemory], "limit"
	if strings.EqualFold(vm.Annotations[annotationHotplug], "true") && spec.Memory != nil && spec.Memory.Guest != nil {
		base, from = *spec.Memory.Guest, "guest memory"
	}
	if base.IsZero() {
		return nil, &Omitted{Key: KeyMemory, Why: "the VM has no memory limit (domain.resources.limits.memory): its guest memory is not known"}
	}
	guest := base.Value()
	if raw := vm.Annotations[config.AnnotationReservedMemory]; raw != "" {
		reserved, err := resource.ParseQuantity(raw)
		if err != nil || reserved.Value() >= guest || reserved.Sign() < 0 {
			return nil, &Omitted{Key: KeyMemory, Why: fmt.Sprintf("the VM's %s annotation is no amount of memory less than its %s: Harvester refuses the VM", config.AnnotationReservedMemory, from)}
		}
		guest -= reserved.Value()
		return &Annotation{Key: KeyMemory, Value: binary(guest),
			How: fmt.Sprintf("the guest memory Harvester's VM mutator gives the VM (domain.memory.guest): the %s %s less %s reserved (%s)", from, base.String(), reserved.String(), config.AnnotationReservedMemory)}, nil
	}
	guest -= reservedDefault
	if guest <= 0 {
		return nil, &Omitted{Key: KeyMemory, Why: "the VM's memory is 100Mi or less, what Harvester reserves: Harvester refuses the VM"}
	}
	return &Annotation{Key: KeyMemory, Value: binary(guest),
		How: fmt.Sprintf("the guest memory Harvester's VM mutator gives the VM (domain.memory.guest): the %s %s less 100Mi, reserved without --harvester-reserved-memory-size before Harvester v1.5 or with its additional-guest-memory-overhead-ratio setting cleared; from v1.5 at the setting's default the guest gets all %s, so this is the lower figure", from, base.String(), base.String())}, nil
}

// binary is n bytes as the shortest exact binary-suffixed quantity ("8092Mi").
func binary(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }

// ephemeralDisk is the size of the root disk, the filesystem the guest's kubelet reports as ephemeral storage: the
// disk the VM boots from first (the lowest bootOrder of its disks and interfaces; without any, the first disk),
// when it is cloned from an image — the cloud image's root filesystem, which cloud-init grows to fill the disk.
// Its size is the claim's in harvesterhci.io/volumeClaimTemplates, which Harvester makes the disk's volume from.
func ephemeralDisk(vm *kubevirtv1.VirtualMachine) (*Annotation, *Omitted) {
	spec := vm.Spec.Template.Spec
	omit := func(format string, args ...any) (*Annotation, *Omitted) {
		return nil, &Omitted{Key: KeyEphemeralDisk, Why: fmt.Sprintf(format, args...)}
	}
	boot, bootOrder := "", uint(0)
	for _, d := range spec.Domain.Devices.Disks {
		if d.BootOrder != nil && (boot == "" || *d.BootOrder < bootOrder) {
			boot, bootOrder = d.Name, *d.BootOrder
		}
	}
	for _, nic := range spec.Domain.Devices.Interfaces {
		if nic.BootOrder != nil && (boot == "" || *nic.BootOrder < bootOrder) {
			return omit("the VM boots from the network first (interface %s): its root disk is not known", nic.Name)
		}
	}
	var disk *kubevirtv1.Disk
	for i, d := range spec.Domain.Devices.Disks {
		if d.Name == boot || boot == "" && i == 0 {
			disk = &spec.Domain.Devices.Disks[i]
			break
		}
	}
	if disk == nil {
		return omit("the VM has no disk to boot from")
	}
	if disk.CDRom != nil {
		return omit("the VM boots from CD-ROM %s: an installer, whose root disk is not known", disk.Name)
	}
	var claim string
	for _, v := range spec.Volumes {
		if v.Name == disk.Name && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	var templates []corev1.PersistentVolumeClaim
	_ = json.Unmarshal([]byte(vm.Annotations[config.AnnotationVolumeClaimTemplates]), &templates) // the builders' own
	for _, t := range templates {
		if t.Name != claim || claim == "" {
			continue
		}
		image := t.Annotations[config.AnnotationImageID]
		size := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if image == "" {
			return omit("the VM boots from %s, a blank disk: its root filesystem is not known", disk.Name)
		}
		return &Annotation{Key: KeyEphemeralDisk, Value: binary(size.Value()),
			How: fmt.Sprintf("the size of %s, the root disk (the first to boot, cloned from image %s): the guest's kubelet reports its root filesystem, which cloud-init grows to the disk and is a little smaller", disk.Name, image)}, nil
	}
	return omit("the VM boots from %s, which is not a volume the driver makes: its size is not known", disk.Name)
}

// nvidiaGPU is the resource NVIDIA's device plugin (and the GPU operator) gives a node's GPUs, a passed-through
// GPU and a vGPU alike (NVIDIA/k8s-device-plugin); nvidiaVendor is the vendor part of the resource names Harvester
// gives NVIDIA's devices (harvester/pcidevices pcidevice.go resourceName, and its vGPU types).
const (
	nvidiaGPU    = "nvidia.com/gpu"
	nvidiaVendor = "nvidia.com/"
)

// pciDisplayClass is the PCI base class of display controllers (VGA 0300, 3D 0302, …): a GPU.
const pciDisplayClass = "03"

// gpus counts the VM's GPUs: its vGPUs (in.VGPUs), the PCI devices Harvester classes as display controllers
// (in.PCIClasses), and KubeVirt's domain.devices.gpus; gpu-type is the resource the guest's device plugin gives
// them, known for NVIDIA's alone. A host device whose class is not known is not counted, and said so.
func gpus(vm *kubevirtv1.VirtualMachine, in Inputs) (count, kind *Annotation, omitted []Omitted) {
	devices := vm.Spec.Template.Spec.Domain.Devices
	var found, vendors, unknown []string
	gpu := func(what, name, device string) {
		found = append(found, fmt.Sprintf("%s %s (%s)", what, name, device))
		vendors = append(vendors, device)
	}
	for _, g := range devices.GPUs {
		gpu("GPU", g.Name, g.DeviceName)
	}
	for _, h := range devices.HostDevices {
		class, known := in.PCIClasses[h.DeviceName]
		switch {
		case in.VGPUs[h.DeviceName]:
			gpu("vGPU", h.Name, h.DeviceName)
		case known && strings.HasPrefix(class, pciDisplayClass):
			gpu("PCI device", h.Name, h.DeviceName+", class "+class)
		case !known:
			unknown = append(unknown, fmt.Sprintf("%s (%s)", h.Name, h.DeviceName))
		}
	}
	if len(unknown) > 0 {
		why := "whether a host device is a GPU is its PCI class, which only Harvester knows: give check the credential that may list pcidevices"
		if in.PCIClasses == nil {
			why = "whether a host device is a GPU is its PCI class, which only Harvester knows: check reads it, render does not"
		}
		omitted = append(omitted, Omitted{Key: KeyGPUCount, Why: fmt.Sprintf("host devices %s not counted: %s", strings.Join(unknown, ", "), why)})
	}
	if len(found) == 0 {
		return nil, nil, omitted
	}
	count = &Annotation{Key: KeyGPUCount, Value: strconv.Itoa(len(found)), How: "the VM's GPUs: " + strings.Join(found, ", ")}
	for _, v := range vendors {
		if !strings.HasPrefix(v, nvidiaVendor) {
			return count, nil, append(omitted, Omitted{Key: KeyGPUType,
				Why: "not every GPU is NVIDIA's: the resource the guest cluster's device plugin gives them is not known; without gpu-type the autoscaler counts no GPU"})
		}
	}
	kind = &Annotation{Key: KeyGPUType, Value: nvidiaGPU,
		How: "the resource NVIDIA's device plugin (or GPU operator) in the guest cluster gives a node's GPUs and vGPUs; the autoscaler counts gpu-count of it"}
	return count, kind, omitted
}
