package objects

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// cloudInitDiskName is the disk the NoCloud datasource is attached as (Harvester's name for it).
const cloudInitDiskName = "cloudinitdisk"

// CloudInitSecretName names the Secret holding the VM's cloud-init user and network data.
func CloudInitSecretName(vmName string) string { return vmName + "-cloudinit" }

// buildVM is the VirtualMachine of cfg, before --harvester-vm-patch, with claims as its disks' volume claims
// (setClaims) and no static address (applyStaticAddress). Harvester's admission webhook adds the rest (memory
// requests and guest memory for overcommit, machine type, MAC annotations, management-network node affinity,
// finalizers); only limits are set here, which is also what ResourceQuota namespaces require
// (harvester/harvester#1455). network says the machine has network data (its own, or a pool's address): the
// cloud-init disk then carries it.
func buildVM(cfg *config.Config, claims []corev1.PersistentVolumeClaim, network bool) *kubevirtv1.VirtualMachine {
	annotations := map[string]string{}
	if cfg.ReservedMemoryMiB > 0 {
		annotations[config.AnnotationReservedMemory] = fmt.Sprintf("%dMi", cfg.ReservedMemoryMiB)
	}
	var kept []string
	for _, d := range cfg.Disks {
		if d.KeepOnRemove {
			kept = append(kept, d.Name)
		}
	}
	if len(kept) > 0 {
		annotations[config.AnnotationKeptVolumes] = strings.Join(kept, ",")
	}
	// harvesterhci.io/sshNames lists the KeyPairs (namespace/name) installed in the guest, as Harvester's own VM
	// builder records them (harvester/harvester pkg/builder/cloudinit.go SSHKey, pkg/builder/vm.go) and its UI
	// for the keys picked at VM creation. "Generate Template" copies it into the template version's keyPairIds
	// (pkg/api/vm/template.go), which Harvester's validator requires to exist
	// (pkg/webhook/resources/templateversion/validator.go): only key pairs PreCreateCheck found go in.
	sshNames := []string{}
	if cfg.SSH.KeyPair != nil {
		sshNames = append(sshNames, cfg.SSH.KeyPair.String())
	}
	for _, ref := range cfg.SSH.ExtraKeyPairs {
		sshNames = append(sshNames, ref.String())
	}

	vm := &kubevirtv1.VirtualMachine{
		TypeMeta: metav1.TypeMeta{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        cfg.MachineName,
			Namespace:   cfg.Namespace,
			Labels:      vmLabels(cfg),
			Annotations: annotations,
		},
		Spec: kubevirtv1.VirtualMachineSpec{
			// Restart after a crash, but not after the guest shut itself down.
			RunStrategy: ptr.To(kubevirtv1.RunStrategyRerunOnFailure),
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: vmLabels(cfg),
					Annotations: map[string]string{
						config.AnnotationSSHNames:              jsonList(sshNames),
						config.AnnotationWaitForLeaseInterface: "[]",
					},
				},
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					EvictionStrategy: ptr.To(cfg.EvictionStrategy),
					Affinity:         vmAffinity(cfg),
					Domain:           domain(cfg),
					Networks:         networks(cfg.NICs),
					Volumes:          volumes(cfg, network),
				},
			},
		},
	}
	setClaims(vm, cfg.Disks, claims)
	return vm
}

func domain(cfg *config.Config) kubevirtv1.DomainSpec {
	d := kubevirtv1.DomainSpec{
		CPU: &kubevirtv1.CPU{
			Cores: uint32(cfg.CPUs), Sockets: 1, Threads: 1,
			Model:                 cfg.CPUModel,
			DedicatedCPUPlacement: cfg.CPUPinning,
			IsolateEmulatorThread: cfg.IsolateEmulatorThread,
		},
		Resources: kubevirtv1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(int64(cfg.CPUs), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(cfg.MemoryGiB)<<30, resource.BinarySI),
		}},
		Devices: kubevirtv1.Devices{
			Disks:      disks(cfg.Disks),
			Interfaces: interfaces(cfg.NICs),
		},
	}
	if cfg.EFI {
		d.Firmware = &kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: ptr.To(cfg.SecureBoot)}}}
		// KubeVirt requires SMM for Secure Boot; Harvester sets it alongside EFI.
		d.Features = &kubevirtv1.Features{SMM: &kubevirtv1.FeatureState{Enabled: ptr.To(cfg.SecureBoot)}}
		if cfg.EFIPersistent {
			// As Harvester's VM form sets it (harvester/harvester-ui-extension#132, for harvester/harvester#7557):
			// KubeVirt keeps the NVRAM in the same backend-storage PVC as a persistent TPM's state, of its
			// vmStateStorageClass (kubevirt/kubevirt pkg/storage/backend-storage/backend-storage.go,
			// HasPersistentEFI), Harvester's vmstate-persistence class.
			d.Firmware.Bootloader.EFI.Persistent = ptr.To(true)
		}
	}
	if cfg.TPM {
		d.Devices.TPM = &kubevirtv1.TPMDevice{}
		if cfg.TPMPersistent {
			// KubeVirt keeps the state in a backend-storage PVC of its vmStateStorageClass, which Harvester sets
			// to its vmstate-persistence class (harvester/harvester deploy/charts/harvester/values.yaml).
			d.Devices.TPM.Persistent = ptr.To(true)
		}
	}
	if cfg.MachineType != "" {
		d.Machine = &kubevirtv1.Machine{Type: cfg.MachineType}
	}
	diskIO(&d, cfg.DiskIO)
	// Harvester v1.8 requests vGPUs as host devices (harvester/harvester#10026); older builders used gpus[].
	for _, g := range cfg.VGPUs {
		d.Devices.HostDevices = append(d.Devices.HostDevices, kubevirtv1.HostDevice{Name: g.Name, DeviceName: g.DeviceName})
	}
	for _, h := range cfg.HostDevices {
		d.Devices.HostDevices = append(d.Devices.HostDevices, kubevirtv1.HostDevice{Name: h.Name, DeviceName: h.DeviceName, Tag: h.Tag})
	}
	return d
}

func disks(ds []config.Disk) []kubevirtv1.Disk {
	out := make([]kubevirtv1.Disk, 0, len(ds)+1)
	for _, d := range ds {
		disk := kubevirtv1.Disk{Name: d.Name}
		if d.CDROM {
			disk.CDRom = &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBus(d.Bus)}
		} else {
			disk.Disk = &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBus(d.Bus)}
		}
		if d.BootOrder > 0 {
			disk.BootOrder = ptr.To(d.BootOrder)
		}
		disk.Cache = kubevirtv1.DriverCache(d.Cache)
		disk.IO = kubevirtv1.DriverIO(d.IO)
		if d.DedicatedIOThread {
			disk.DedicatedIOThread = ptr.To(true)
		}
		out = append(out, disk)
	}
	return append(out, kubevirtv1.Disk{
		Name:       cloudInitDiskName,
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}},
	})
}

// diskIO sets the VM-wide disk performance: each field only when given, so a VM without these options is as
// before them.
func diskIO(d *kubevirtv1.DomainSpec, io config.DiskIO) {
	if io.BlockMultiQueue {
		d.Devices.BlockMultiQueue = ptr.To(true)
	}
	if io.ThreadsPolicy != "" {
		d.IOThreadsPolicy = ptr.To(io.ThreadsPolicy)
	}
	if io.PoolThreads > 0 {
		d.IOThreads = &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: ptr.To(io.PoolThreads)}
	}
}

// volumes are the VM's volumes: one per disk, its claim named by setClaims, and the cloud-init disk's.
func volumes(cfg *config.Config, network bool) []kubevirtv1.Volume {
	out := make([]kubevirtv1.Volume, 0, len(cfg.Disks)+1)
	for _, d := range cfg.Disks {
		out = append(out, kubevirtv1.Volume{Name: d.Name, VolumeSource: kubevirtv1.VolumeSource{
			PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{Hotpluggable: d.HotPlug},
		}})
	}
	// Cloud-init always travels in a Secret: KubeVirt rejects inline user data over 2048 bytes
	// (harvester/harvester#760), and the user data holds Rancher's registration token.
	secret := &corev1.LocalObjectReference{Name: CloudInitSecretName(cfg.MachineName)}
	noCloud := &kubevirtv1.CloudInitNoCloudSource{UserDataSecretRef: secret}
	if network {
		noCloud.NetworkDataSecretRef = secret
	}
	return append(out, kubevirtv1.Volume{Name: cloudInitDiskName, VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: noCloud}})
}

func interfaces(nics []config.NIC) []kubevirtv1.Interface {
	out := make([]kubevirtv1.Interface, 0, len(nics))
	for _, n := range nics {
		iface := kubevirtv1.Interface{Name: n.Name, Model: n.Model, MacAddress: n.MACAddress}
		if n.BootOrder > 0 {
			iface.BootOrder = ptr.To(n.BootOrder)
		}
		if n.Masquerade {
			iface.Masquerade = &kubevirtv1.InterfaceMasquerade{}
		} else {
			iface.Bridge = &kubevirtv1.InterfaceBridge{}
		}
		out = append(out, iface)
	}
	return out
}

func networks(nics []config.NIC) []kubevirtv1.Network {
	out := make([]kubevirtv1.Network, 0, len(nics))
	for _, n := range nics {
		net := kubevirtv1.Network{Name: n.Name}
		if n.Network != nil {
			net.Multus = &kubevirtv1.MultusNetwork{NetworkName: n.Network.String()}
		} else {
			net.Pod = &kubevirtv1.PodNetwork{}
		}
		out = append(out, net)
	}
	return out
}

// jsonList renders a string list as JSON (marshalling a []string cannot fail).
func jsonList(v []string) string {
	b, _ := json.Marshal(v)
	return string(b)
}
