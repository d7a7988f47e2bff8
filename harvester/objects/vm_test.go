package objects

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

const zoneAffinity = `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a"]}]}]}}}`

// vmCases are the configurations whose VirtualMachine is pinned by a golden file.
var vmCases = []struct {
	name    string
	machine string
	opts    config.Options
}{
	{"minimal-legacy", "m1", configtest.MinimalOptions()},
	{"rancher-pool", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagVMNamespace, "team-a")},
	{"three-disks-two-nics", "gc8-pool1-q99l7-6ndw9", configtest.With(config.DefaultOptions(),
		config.FlagClusterName, "gc8",
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1},{"storageClassName":"longhorn","size":100,"bus":"scsi","accessMode":"ReadWriteOnce","volumeMode":"Filesystem"},{"imageName":"tools-iso","size":1,"type":"cd-rom","bus":"sata","bootOrder":2}]}`,
		config.FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vm-untag","model":"virtio","type":"bridge"},{"macAddress":"52:54:00:00:00:02","model":"e1000","type":"masquerade"}]}`)},
	// A CD-ROM without a bus goes on SATA: KubeVirt refuses virtio for CD-ROMs.
	{"cd-rom-default-bus", "m1", configtest.With(configtest.MinimalOptions(),
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1},{"imageName":"tools-iso","size":1,"type":"cd-rom","bootOrder":2}]}`)},
	{"zone-affinity", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagVMAffinity, zoneAffinity)},
	{"zone-flag", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagZone, "zone-a, zone-b")},
	// The zone joins every required term of the user's affinity; preferred terms and pod rules stay as given.
	{"zone-region-merged-with-affinity", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagZone, "zone-a", config.FlagRegion, "us-east",
		config.FlagVMAffinity, `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"gpu","operator":"Exists"}]},{"matchExpressions":[{"key":"tier","operator":"In","values":["fast"]}]}]},"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"preference":{"matchExpressions":[{"key":"ssd","operator":"Exists"}]}}]},"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"kubernetes.io/hostname"}]}}`)},
	// A data disk given "autoDelete": false is named on the VM, so Remove leaves its volume.
	{"kept-data-disk", "m1", configtest.With(config.DefaultOptions(),
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1},{"storageClassName":"longhorn","size":100,"autoDelete":false},{"storageClassName":"longhorn","size":10,"autoDelete":true}]}`,
		config.FlagNetworkName, "default/vm-untag")},
	{"efi-secureboot-tpm", "m1", configtest.With(configtest.MinimalOptions(), config.FlagEnableEFI, true, config.FlagEnableSecureBoot, true, config.FlagEnableTPM, true)},
	// Persistent TPM (its state in KubeVirt's backend storage), the machine type, disk cache modes and a NIC that
	// network-boots between the disks: boot orders are unique across disks and NICs.
	{"tpm-persistent-machine-type-cache-nic-boot", "m1", configtest.With(config.DefaultOptions(),
		config.FlagEnableEFI, true, config.FlagEnableTPM, true, config.FlagPersistentTPM, true, config.FlagMachineType, "q35",
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1,"cache":"none"},{"storageClassName":"longhorn","size":100,"cache":"writeback"},{"imageName":"tools-iso","size":1,"type":"cd-rom","bootOrder":3,"cache":"writethrough"}]}`,
		config.FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vm-untag","bootOrder":2},{"networkName":"default/storage"}]}`)},
	// Disk performance as the reference driver's work in progress sets it (harvester/docker-machine-driver-harvester
	// harvester/storageperformance.go at 6092ec41): native I/O on an uncached virtio disk, threads on a SCSI disk,
	// block multi-queue and a supplemental pool; the EFI variables kept, beside the TPM's.
	{"disk-io-supplemental-pool-persistent-efi", "m1", configtest.With(config.DefaultOptions(),
		config.FlagEnableEFI, true, config.FlagEnableSecureBoot, true, config.FlagPersistentEFI, true, config.FlagEnableTPM, true, config.FlagPersistentTPM, true,
		config.FlagBlockMultiQueue, true, config.FlagIOThreadsPolicy, "supplementalPool", config.FlagIOThreadCount, "4",
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1,"cache":"none","io":"native"},{"storageClassName":"longhorn","size":100,"bus":"scsi","cache":"writeback","io":"threads"},{"imageName":"tools-iso","size":1,"type":"cd-rom","bootOrder":2}]}`,
		config.FlagNetworkName, "default/vm-untag")},
	// The auto policy beside CPU pinning and an isolated emulator thread, where KubeVirt puts the I/O threads
	// with the emulator thread (pkg/virt-launcher/virtwrap/converter/iothreads, getThreadPoolLimit), and a disk
	// with a dedicated I/O thread.
	{"io-threads-auto-pinned", "m1", configtest.With(config.DefaultOptions(),
		config.FlagCPUCount, 4, config.FlagCPUPinning, true, config.FlagIsolateEmulatorThread, true, config.FlagIOThreadsPolicy, "auto",
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/image-8854n","size":40,"bootOrder":1,"dedicatedIOThread":true},{"storageClassName":"longhorn","size":100,"io":"threads"}]}`,
		config.FlagNetworkName, "default/vm-untag")},
	{"reserved-memory-cpu-model-pinning", "m1", configtest.With(configtest.MinimalOptions(), config.FlagReservedMemorySize, 512, config.FlagMemorySize, 8, config.FlagCPUCount, 4,
		config.FlagCPUModel, "host-passthrough", config.FlagCPUPinning, true, config.FlagIsolateEmulatorThread, true)},
	{"vgpu", "m1", configtest.With(configtest.MinimalOptions(), config.FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"},{"name":"gpu2","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`)},
	// Rancher's form names every vGPU "provisioned" (rancher/dashboard pkg/harvester-manager/machine-config/
	// harvester.vue, updateVGpu): numbered apart, around a host device's name; the host device's role tag kept.
	{"vgpu-rancher-placeholders", "m1", configtest.With(configtest.MinimalOptions(),
		config.FlagVGPUInfo, `{"vGPURequests":[{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"},{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`,
		config.FlagHostDeviceInfo, `{"hostDevices":[{"name":"provisioned-1","deviceName":"intel.com/ETHERNET_CONTROLLER_X710_FOR_10GBE_SFP","tag":"storage-nic"}]}`)},
	// Passthrough devices pin a VM to its host: it is shut down, not migrated, for maintenance and drains.
	{"host-devices-labels-strategies", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8",
		config.FlagVGPUInfo, `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`,
		config.FlagHostDeviceInfo, `{"hostDevices":[{"name":"nic1","deviceName":"intel.com/ETHERNET_CONTROLLER_X710_FOR_10GBE_SFP"},{"name":"token","deviceName":"kubevirt.io/node1-0951-1666-001002"}]}`,
		config.FlagVMLabels, "team=ml,example.com/cost-center=42", config.FlagEvictionStrategy, "None", config.FlagMaintenanceStrategy, "ShutdownAndRestartAfterDisable")},
	// People's key pairs are listed in harvesterhci.io/sshNames beside --harvester-key-pair-name's, which is not repeated.
	{"ssh-keypairs", "m1", configtest.With(configtest.MinimalOptions(), config.FlagVMNamespace, "team-a", config.FlagSSHKeyPairs, "alice, ops/bob, ops/bob")},
	// The first NIC gets the MAC the allocated address's network-config matches; the VM names its allocation.
	{"ip-pool", "m1", configtest.With(configtest.MinimalOptions(), config.FlagIPPool, "10.0.0.10-10.0.0.59/24", config.FlagIPPoolGateway, "10.0.0.1")},
	// A lease of Harvester's managed DHCP: the first NIC gets the MAC derived for the create, which the lease is
	// bound to and the network data matches; the VM names its IPPool (the pinned lease is ip-pool-name-pinned).
	{"ip-pool-name", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagIPPoolName, "vlan1",
		config.FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vlan1"},{"networkName":"default/storage","macAddress":"52:54:00:00:00:02"}]}`)},
	// --harvester-vm-patch: fields no flag covers (vmpatch_test.go), as a merge patch and as a JSON patch.
	{"vm-patch-merge", "gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc8", config.FlagVMPatch, vmPatchMerge)},
	{"vm-patch-json", "m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, vmPatchJSON)},
	// namespace + machine name exceed 63 characters: machineSetName is hashed (harvester/harvester#7467).
	{"long-names-hashed", "averyveryverylongclusternamethatgoes-pool1-q99l7-6ndw9",
		configtest.With(configtest.MinimalOptions(), config.FlagVMNamespace, strings.Repeat("a", 40), config.FlagClusterName, "averyveryverylongclusternamethatgoes")},
}

func TestBuildVirtualMachineGolden(t *testing.T) {
	for _, tc := range vmCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.ParseConfig(tc.machine, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := vmFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkVMInvariants(t, cfg, vm)
			out, err := toYAML(vm)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "vm/"+tc.name+".yaml", out)
		})
	}
}

// checkVMInvariants asserts what must hold for every VM, whatever its golden file says.
func checkVMInvariants(t *testing.T, cfg *config.Config, vm *kubevirtv1.VirtualMachine) {
	t.Helper()
	if vm.Name != cfg.MachineName || vm.Namespace != cfg.Namespace {
		t.Errorf("VM %s/%s, want %s/%s (Rancher's cleanup finds the VM by machine name)", vm.Namespace, vm.Name, cfg.Namespace, cfg.MachineName)
	}
	for where, labels := range map[string]map[string]string{"VM": vm.Labels, "template": vm.Spec.Template.ObjectMeta.Labels} {
		if labels[config.LabelCreator] != config.CreatorName {
			t.Errorf("%s lacks %s=%s", where, config.LabelCreator, config.CreatorName)
		}
		for k, v := range cfg.Labels {
			if labels[k] != v {
				t.Errorf("%s label %s=%q, want the user's %q", where, k, labels[k], v)
			}
		}
		if s := cfg.MaintenanceStrategy; s != "" && labels[config.LabelMaintainModeStrategy] != s {
			t.Errorf("%s lacks %s=%s (Harvester reads it on the VM and on its pod)", where, config.LabelMaintainModeStrategy, s)
		}
		for k, v := range labels {
			if len(v) > 63 {
				t.Errorf("%s label %s=%q is longer than 63 characters", where, k, v)
			}
		}
	}
	var claims []corev1.PersistentVolumeClaim
	if err := json.Unmarshal([]byte(vm.Annotations[config.AnnotationVolumeClaimTemplates]), &claims); err != nil {
		t.Fatalf("volumeClaimTemplates: %v", err)
	}
	vols := map[string]string{}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			vols[v.PersistentVolumeClaim.ClaimName] = v.Name
		}
		if v.CloudInitNoCloud != nil && (v.CloudInitNoCloud.UserDataSecretRef == nil || v.CloudInitNoCloud.UserData != "") {
			t.Errorf("cloud-init must come from the Secret, not inline: %+v", v.CloudInitNoCloud)
		}
	}
	if len(claims) != len(cfg.Disks) || len(vols) != len(cfg.Disks) {
		t.Errorf("%d disks, %d claim templates, %d claim volumes", len(cfg.Disks), len(claims), len(vols))
	}
	for _, c := range claims {
		if _, ok := vols[c.Name]; !ok {
			t.Errorf("claim template %s is not used by a volume", c.Name)
		}
		if img := c.Annotations[config.AnnotationImageID]; img != "" && (c.Spec.StorageClassName == nil || !strings.HasPrefix(*c.Spec.StorageClassName, "longhorn-")) {
			t.Errorf("image claim %s does not use its image's storage class", c.Name)
		}
	}
	if vm.Spec.Template.Spec.Affinity == nil || vm.Spec.Template.Spec.Affinity.PodAntiAffinity == nil {
		t.Errorf("every VM keeps a soft anti-affinity so a pool spreads across hosts")
	}
	// Device names become the domain's device aliases, which libvirt needs unique; KubeVirt's admitter does not
	// check it.
	seen := map[string]bool{}
	for _, h := range vm.Spec.Template.Spec.Domain.Devices.HostDevices {
		if seen[h.Name] {
			t.Errorf("host device name %q is used twice", h.Name)
		}
		seen[h.Name] = true
	}
	bootOrders := map[uint]bool{}
	for _, d := range vm.Spec.Template.Spec.Domain.Devices.Disks {
		if d.BootOrder != nil && bootOrders[*d.BootOrder] {
			t.Errorf("boot order %d is used twice", *d.BootOrder)
		} else if d.BootOrder != nil {
			bootOrders[*d.BootOrder] = true
		}
	}
	for _, i := range vm.Spec.Template.Spec.Domain.Devices.Interfaces {
		if i.BootOrder != nil && bootOrders[*i.BootOrder] {
			t.Errorf("boot order %d is used twice", *i.BootOrder)
		} else if i.BootOrder != nil {
			bootOrders[*i.BootOrder] = true
		}
	}
	limits := vm.Spec.Template.Spec.Domain.Resources.Limits
	if limits.Memory().Value() != int64(cfg.MemoryGiB)<<30 || limits.Cpu().Value() != int64(cfg.CPUs) {
		t.Errorf("limits %v for %d CPUs / %d GiB (ResourceQuota namespaces need limits.memory)", limits, cfg.CPUs, cfg.MemoryGiB)
	}
}

func TestLabelValues(t *testing.T) {
	tests := []struct{ namespace, machine, cluster, set, pool string }{
		{"default", "gc8-pool1-q99l7-6ndw9", "gc8", "default-gc8-pool1", "pool1-q99l7"},
		{"default", "m1", "", "", ""},
		{"default", "a-b", "a", "default", ""},
		{"default", "nodash", "c", "", "nodash"},
		// Over 63 characters: hashed with the reference driver's scheme (FNV-1a 32, base64url) so mixed-version
		// pools agree. The expected value was computed independently of this code.
		{strings.Repeat("n", 40), strings.Repeat("c", 30) + "-pool-x-y", "", "hash_bUuYYw_z", ""},
	}
	for _, tt := range tests {
		if got := machineSetName(tt.namespace, tt.machine); got != tt.set {
			t.Errorf("machineSetName(%q, %q) = %q, want %q", tt.namespace, tt.machine, got, tt.set)
		}
		if tt.cluster != "" {
			if got := nodePoolName(tt.cluster, tt.machine); got != tt.pool {
				t.Errorf("nodePoolName(%q, %q) = %q, want %q", tt.cluster, tt.machine, got, tt.pool)
			}
		}
	}
}

func TestImageDiskMustUseImageClass(t *testing.T) {
	cfg, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, `{"disks":[{"imageName":"img","storageClassName":"fast","size":10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = vmFor(cfg)
	if err == nil || !strings.Contains(err.Error(), `--harvester-disk-info: disk-0: storage class "fast" differs from the class of its image default/img ("longhorn-img")`) {
		t.Fatalf("want a storage class mismatch error, got %v", err)
	}
	m, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = m.Complete(Facts{}, Draw{ClaimSuffix: "abcde"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Objects(Learned{}); err == nil || !strings.Contains(err.Error(), "storage class of image default/img is not known") {
		t.Fatalf("want a missing-fact error, got %v", err)
	}
}
