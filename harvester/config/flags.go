package config

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/rancher/machine/libmachine/mcnflag"
)

// Flag names. The first 32 are the reference driver's (harvester/docker-machine-driver-harvester v1.0.x) and must
// keep their names, types, defaults and value formats: Rancher's stored machine configs and rancher2 Terraform
// configs send them. Rancher derives its UI field from the part after "harvester-" (kebab → lowerCamel) and back
// again, so every name must survive that round trip (see TestFlagsRoundTripThroughRancher).
const (
	FlagKubeconfigContent     = "harvester-kubeconfig-content"
	FlagClusterType           = "harvester-cluster-type"
	FlagClusterID             = "harvester-cluster-id"
	FlagClusterName           = "harvester-cluster-name"
	FlagVMNamespace           = "harvester-vm-namespace"
	FlagCPUCount              = "harvester-cpu-count"
	FlagMemorySize            = "harvester-memory-size"
	FlagDiskSize              = "harvester-disk-size"
	FlagDiskBus               = "harvester-disk-bus"
	FlagImageName             = "harvester-image-name"
	FlagDiskInfo              = "harvester-disk-info"
	FlagSSHUser               = "harvester-ssh-user"
	FlagSSHPort               = "harvester-ssh-port"
	FlagSSHPassword           = "harvester-ssh-password"
	FlagKeyPairName           = "harvester-key-pair-name"
	FlagSSHPrivateKeyPath     = "harvester-ssh-private-key-path"
	FlagNetworkType           = "harvester-network-type"
	FlagNetworkName           = "harvester-network-name"
	FlagNetworkModel          = "harvester-network-model"
	FlagNetworkInfo           = "harvester-network-info"
	FlagCloudConfig           = "harvester-cloud-config"
	FlagUserData              = "harvester-user-data"
	FlagNetworkData           = "harvester-network-data"
	FlagVMAffinity            = "harvester-vm-affinity"
	FlagEnableEFI             = "harvester-enable-efi"
	FlagEnableSecureBoot      = "harvester-enable-secure-boot"
	FlagVGPUInfo              = "harvester-vgpu-info"
	FlagCPUPinning            = "harvester-cpu-pinning"
	FlagIsolateEmulatorThread = "harvester-isolate-emulator-thread"
	FlagEnableTPM             = "harvester-enable-tpm"
	FlagReservedMemorySize    = "harvester-reserved-memory-size"
	FlagCPUModel              = "harvester-cpu-model"

	// Flags this driver adds. Bools default to false (Rancher only sends a bool when it is true), so each names
	// the non-default behaviour. None declares a value: the driver applies their defaults itself (flagSpec.applied),
	// and --harvester-create-timeout is a string flag, since an int flag declares at least "0" to Rancher.
	FlagSkipGuestAgent = "harvester-skip-guest-agent"
	FlagCreateTimeout  = "harvester-create-timeout"
	FlagZone           = "harvester-zone"
	FlagRegion         = "harvester-region"

	FlagCloudProviderConfig         = "harvester-cloud-provider-config"
	FlagGenerateCloudProviderConfig = "harvester-generate-cloud-provider-config"
	FlagCloudProviderServer         = "harvester-cloud-provider-server"
	// The digit goes last: Rancher does not split "rke2Cloud…" back into "rke2-cloud…".
	FlagCloudProviderForRKE2      = "harvester-cloud-provider-for-rke2"
	FlagCloudProviderDistribution = "harvester-cloud-provider-distribution"
	FlagCloudProviderDropIn       = "harvester-cloud-provider-drop-in"

	// Host devices, labels and strategies. The names are those of the reference driver's pending changes
	// (harvester/docker-machine-driver-harvester PRs #96 and #83), so one Rancher machine config serves both.
	FlagHostDeviceInfo      = "harvester-host-device-info"
	FlagVMLabels            = "harvester-vm-labels"
	FlagEvictionStrategy    = "harvester-eviction-strategy"
	FlagMaintenanceStrategy = "harvester-maintenance-strategy"

	FlagIPPool        = "harvester-ip-pool"
	FlagIPPoolGateway = "harvester-ip-pool-gateway"
	FlagIPPoolDNS     = "harvester-ip-pool-dns"

	// "keypairs" in one word: Rancher's field sshKeypairs turns back into ssh-keypairs.
	FlagSSHKeyPairs = "harvester-ssh-keypairs"
	// FlagOS is the guest's operating system. rancher-machine reads the driver flag whose name ends in "-os"
	// (libmachine/drivers DriverOSFlag) to choose the form of --custom-install-script's cloud-config, and warns on
	// every create of a driver without one.
	FlagOS = "harvester-os"
	// VM options of KubeVirt's domain.
	FlagPersistentTPM = "harvester-persistent-tpm"
	FlagMachineType   = "harvester-machine-type"

	FlagIPPoolDNSSearch = "harvester-ip-pool-dns-search"
	// FlagVMPatch changes the VM the driver builds, for the KubeVirt and Harvester fields no flag covers.
	FlagVMPatch = "harvester-vm-patch"

	// User data and network data kept in Harvester: the Secret (in the VM namespace) holding them, read at create
	// time (the names terraform-provider-harvester's cloudinit block gives them, user_data_secret_name and
	// network_data_secret_name). FlagUserDataSecret contains "user-data", so it must stay behind
	// harvester-cloud-config in the table: rancher-machine takes the first such flag as its user-data flag
	// (libmachine/drivers DriverUserdataFlag).
	FlagUserDataSecret    = "harvester-user-data-secret"
	FlagNetworkDataSecret = "harvester-network-data-secret"

	// FlagPersistentEFI keeps the EFI firmware's variables, beside FlagPersistentTPM (Harvester 1.5's "EFI
	// Persistent State", harvester/harvester#7557).
	FlagPersistentEFI = "harvester-persistent-efi"
	// Disk performance, VM-wide. The names, types and values are those of the reference driver's work in
	// progress (harvester/docker-machine-driver-harvester harvester/flags.go and storageperformance.go at
	// 6092ec41), so one Rancher machine config serves both; FlagIOThreadCount is a string flag here, as every
	// number flag beyond the reference 32 is (see flagSpec.applied): Rancher carries both as string fields.
	FlagBlockMultiQueue = "harvester-block-multi-queue"
	FlagIOThreadsPolicy = "harvester-io-threads-policy"
	FlagIOThreadCount   = "harvester-io-thread-count"

	// FlagIPPoolName takes the first NIC's address from an IPPool of Harvester's managed DHCP (the vm-dhcp-controller
	// add-on, Harvester 1.9's static leases) instead of --harvester-ip-pool's range.
	FlagIPPoolName = "harvester-ip-pool-name"
)

// Defaults of the flags, as the reference driver has them.
const (
	DefaultVMNamespace       = "default"
	DefaultCPUCount          = 2
	DefaultMemorySizeGiB     = 4
	DefaultSSHUser           = "root"
	DefaultSSHPort           = 22
	DefaultReservedMemoryMiB = -1 // unset
	DefaultCreateTimeoutSecs = 15 * 60
	defaultDiskBus           = "virtio"
	defaultNetworkModel      = "virtio"
	envPrefix                = "HARVESTER_"
	flagPrefix               = "harvester-"
)

type flagKind int

const (
	stringFlag flagKind = iota
	intFlag
	boolFlag
)

// flagSpec is one row of the flag table: everything GetCreateFlags, the config parser, the render subcommand and
// the flag table of docs/options.md need to know about a flag.
type flagSpec struct {
	name string
	kind flagKind
	str  string // default of a string flag, declared to rancher-machine and Rancher
	num  int    // default of an int flag, declared likewise
	// applied is the default of a flag beyond the reference 32 that the driver applies itself when the flag is
	// empty; the flag declares "" to Rancher. Rancher makes every declared default a default of its
	// HarvesterConfig CRD, so a non-empty one would change every stored HarvesterConfig and the command line
	// of every pool that adopts the new schema (see TestNewFlagsDeclareNoValue).
	applied string
	usage   string // becomes the Rancher UI field description: say the unit, the format and the default
}

// flagTable lists every flag in the order rancher-machine and Rancher see them. Order matters once:
// rancher-machine's DriverUserdataFlag picks the FIRST flag whose name contains "user-data", "userdata",
// "custom-data" or "cloud-config", so harvester-cloud-config must stay ahead of harvester-user-data.
var flagTable = []flagSpec{
	{name: FlagKubeconfigContent, usage: "Kubeconfig of the Harvester cluster, as YAML or base64. Empty: use $KUBECONFIG. Rancher fills it from the Harvester cloud credential."},
	{name: FlagClusterType, usage: "Kept for compatibility; unused (Rancher's cloud credential sets it)."},
	{name: FlagClusterID, usage: "Kept for compatibility; unused (Rancher's cloud credential sets it)."},
	{name: FlagClusterName, usage: "Name of the guest cluster the machine belongs to; labels the VM for the Harvester cloud provider and cleanup. Rancher fills it in only for its driver named harvester: under any other driver name, set it to the cluster's name."},
	{name: FlagVMNamespace, str: DefaultVMNamespace, usage: "Harvester namespace for the VM, its volumes and its cloud-init Secret. Default: default."},
	{name: FlagCPUCount, kind: intFlag, num: DefaultCPUCount, usage: "Number of virtual CPU cores (1 to 4294967295, what KubeVirt's CPU topology holds). Default: 2."},
	{name: FlagMemorySize, kind: intFlag, num: DefaultMemorySizeGiB, usage: "Memory in GiB (at most 8589934591: its bytes must fit a Kubernetes quantity). Default: 4."},
	{name: FlagDiskSize, kind: intFlag, usage: "Size in GiB of the root disk when --harvester-disk-info is not given (required then; at most 8589934591)."},
	{name: FlagDiskBus, usage: "Bus of the root disk when --harvester-disk-info is not given: virtio, scsi or sata. Default: virtio."},
	{name: FlagImageName, usage: "Cloud image of the root disk when --harvester-disk-info is not given, as namespace/name or name (in the VM namespace)."},
	{name: FlagDiskInfo, usage: `Disks as JSON: {"disks":[{"imageName":"ns/image","storageClassName":"","size":40,"bootOrder":1,"bus":"virtio","type":"disk","hotPlugAble":false,"cache":"none","io":"native","dedicatedIOThread":false,"autoDelete":true}]}; size in GiB; each disk needs an image or a storage class; bus virtio (default), scsi or sata, and for type cd-rom sata (default) or scsi; autoDelete false keeps the disk's volume when the machine is removed; cache none, writethrough or writeback (default: KubeVirt's choice); io native (needs cache none) or threads (default: KubeVirt's choice); dedicatedIOThread true gives a virtio disk an I/O thread of its own (unless --harvester-io-threads-policy is supplementalPool, whose pool every virtio disk uses); io and dedicatedIOThread not on a cd-rom; boot orders unique across disks and NICs. Overrides disk size, disk bus and image name.`},
	{name: FlagSSHUser, str: DefaultSSHUser, usage: "User the driver's SSH key (and password, if set) is installed for. Default: root."},
	{name: FlagSSHPort, kind: intFlag, num: DefaultSSHPort, usage: "SSH port of the guest (1-65535). Default: 22."},
	{name: FlagSSHPassword, usage: "Password for the SSH user; enables SSH password login. Empty: key login only."},
	{name: FlagKeyPairName, usage: "Harvester SSH key pair to install, as namespace/name or name; needs --harvester-ssh-private-key-path with its private key. For the keys of people who log in, use --harvester-ssh-keypairs."},
	{name: FlagSSHPrivateKeyPath, usage: "Path of an existing private key to use instead of generating one (a regular file of at most 64 KiB, without a passphrase; its public key is installed unless a key pair is named)."},
	{name: FlagNetworkType, usage: "Kept for compatibility; unused (the network interface is a bridge; use --harvester-network-info for others)."},
	{name: FlagNetworkName, usage: "Network of the single NIC when --harvester-network-info is not given, as namespace/name or name of a Harvester VM network."},
	{name: FlagNetworkModel, usage: "Model of that NIC: virtio, e1000, e1000e, igb, ne2k_pci, pcnet or rtl8139. Default: virtio."},
	{name: FlagNetworkInfo, usage: `NICs as JSON: {"interfaces":[{"networkName":"ns/net","macAddress":"","model":"virtio","type":"bridge","bootOrder":2}]}; type bridge (default) or masquerade (pod network, no networkName; at most one); macAddress unicast and not all zeros, or empty; bootOrder (optional, network boot) unique across disks and NICs. Overrides network name and model.`},
	{name: FlagCloudConfig, usage: "Leave empty: rancher-machine fills it with the path of the cloud-init file that carries Rancher's install script."},
	{name: FlagUserData, usage: "Your cloud-init user data (cloud-config, shell script or MIME multipart), as text or base64; at most 1 MiB once every gzip part is inflated, and cloud-config only with the YAML tags cloud-init loads. Merged with the driver's and Rancher's parts; the hostname always comes from the machine."},
	{name: FlagNetworkData, usage: "cloud-init network-config (version 1 or 2), as text or base64. Empty: the image's default (usually DHCP)."},
	{name: FlagVMAffinity, usage: "Scheduling affinity of the VM as a Kubernetes Affinity in JSON or base64, e.g. node affinity on topology.kubernetes.io/zone. Empty: spread the pool's VMs across hosts."},
	{name: FlagEnableEFI, kind: boolFlag, usage: "Boot with EFI firmware instead of BIOS."},
	{name: FlagEnableSecureBoot, kind: boolFlag, usage: "Enable Secure Boot (needs --harvester-enable-efi)."},
	{name: FlagVGPUInfo, usage: `vGPUs as JSON: {"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}; names unique, except Rancher's placeholder "provisioned", numbered provisioned, provisioned-1, … around the other device names.`},
	{name: FlagCPUPinning, kind: boolFlag, usage: "Pin the VM's vCPUs to dedicated host CPUs (needs the CPU manager on at least one Harvester node)."},
	{name: FlagIsolateEmulatorThread, kind: boolFlag, usage: "Give the emulator thread its own dedicated host CPU (with CPU pinning)."},
	{name: FlagEnableTPM, kind: boolFlag, usage: "Add a virtual TPM device."},
	{name: FlagReservedMemorySize, kind: intFlag, num: DefaultReservedMemoryMiB, usage: "Memory in MiB reserved for the VM's own overhead (less than the VM memory). -1: Harvester's default."},
	{name: FlagCPUModel, usage: "CPU model of the VM, e.g. host-passthrough (letters, digits, '-', '_' and '.'). Empty: Harvester's default."},
	{name: FlagSkipGuestAgent, kind: boolFlag, usage: "Do not add qemu-guest-agent to cloud-init. For air-gapped images that already run the agent: without a running agent the driver cannot see the VM's IP on bridge networks."},
	{name: FlagCreateTimeout, applied: strconv.Itoa(DefaultCreateTimeoutSecs), usage: "Seconds to wait for the VM to run and report an IP before the machine is removed again (a whole number, at most 9223372036). Default: 900."},
	{name: FlagZone, usage: "Run the VM only on Harvester hosts in these zones (host label topology.kubernetes.io/zone), comma-separated, e.g. zone-a. Empty: any zone."},
	{name: FlagRegion, usage: "Run the VM only on Harvester hosts in these regions (host label topology.kubernetes.io/region), comma-separated. Empty: any region."},
	{name: FlagCloudProviderConfig, usage: "Kubeconfig for the guest cluster's Harvester cloud provider and CSI driver (a scoped service account; see the cloud-provider-config subcommand), as YAML or base64. Written to /etc/kubernetes/cloud-config and the distribution's path, /var/lib/rancher/rke2/etc/config-files/cloud-provider-config or /var/lib/rancher/k3s/etc/config-files/cloud-provider-config (root, 0600). Rancher's RKE2 flow does this itself: leave empty there."},
	{name: FlagGenerateCloudProviderConfig, kind: boolFlag, usage: "Create (once per guest cluster, named after --harvester-cluster-name) the cloud provider's scoped service account in Harvester and write its kubeconfig into the guest, as --harvester-cloud-provider-config does."},
	{name: FlagCloudProviderServer, usage: "Harvester's address as the guests reach it, https://<Harvester VIP>:6443 (no user:password@), for the generated kubeconfig. Empty: discovered from Harvester."},
	{name: FlagCloudProviderForRKE2, kind: boolFlag, usage: "Also write /etc/rancher/rke2/config.yaml.d/90-harvester-cloud-provider.yaml setting cloud-provider-name harvester and that config file, for RKE2 installed outside Rancher's cloud provider setting. The same as --harvester-cloud-provider-drop-in with distribution rke2."},
	{name: FlagCloudProviderDistribution, applied: DefaultDistribution, usage: "Kubernetes distribution of the guest cluster, for where the cloud provider kubeconfig goes: rke2 or k3s. Default: rke2."},
	{name: FlagCloudProviderDropIn, kind: boolFlag, usage: "Also write the distribution's config drop-in that turns the Harvester cloud provider on, for clusters installed outside Rancher: RKE2 /etc/rancher/rke2/config.yaml.d/90-harvester-cloud-provider.yaml (cloud-provider-name harvester), K3s /etc/rancher/k3s/config.yaml.d/90-harvester-cloud-provider.yaml (disable-cloud-controller; install the harvester-cloud-provider chart with cloudConfigPath /var/lib/rancher/k3s/etc/config-files/cloud-provider-config)."},
	{name: FlagHostDeviceInfo, usage: `PCI and USB host devices to pass through, as JSON: {"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10","tag":"compute"}]}; name: a lowercase name unique among host devices and vGPUs; deviceName: the device's resource name in Harvester (Advanced → PCI Devices / USB Devices), enabled for passthrough; tag (optional): KubeVirt's device role tag. Empty: none.`},
	{name: FlagVMLabels, usage: "Extra labels of the VM and its instances, as key=value,key=value (Kubernetes label keys and values). The labels the driver sets itself (harvesterhci.io/creator, vmName, machineSetName, the guest-cluster and node-pool labels) cannot be given. Empty: none."},
	{name: FlagEvictionStrategy, applied: DefaultEvictionStrategy, usage: "What KubeVirt does with the VM when its host is drained: LiveMigrateIfPossible, LiveMigrate, None or External. Default: LiveMigrateIfPossible."},
	{name: FlagMaintenanceStrategy, usage: "What Harvester does with the VM when its host enters maintenance mode (label harvesterhci.io/maintain-mode-strategy): Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable or Shutdown. Empty: Harvester's default (Migrate)."},
	{name: FlagIPPool, usage: "Static addresses for the first NIC (a bridge on a VM network): each machine gets one of them, allocated in Harvester, as FIRST-LAST/PREFIX (10.0.0.10-10.0.0.59/24, 2001:db8::10-2001:db8::59/64) or a subnet (10.0.0.0/24: all but its network, broadcast and gateway addresses); for a dual-stack NIC one IPv4 and one IPv6 range, comma-separated (10.0.0.10-10.0.0.59/24,2001:db8::10-2001:db8::59/64), and each machine gets one address of each; unicast addresses only (no loopback, link-local, multicast or unspecified ones), at most 65536. Given to the guest as cloud-init network-config v2, added to --harvester-network-data (v2 only, its ethernets matched by macaddress, none the first NIC's). Empty: no static address (DHCP)."},
	{name: FlagIPPoolGateway, usage: "Default gateway of --harvester-ip-pool's subnet, e.g. 10.0.0.1; for a dual-stack pool at most one per family, comma-separated, e.g. 10.0.0.1,2001:db8::1. Empty: no default route."},
	{name: FlagIPPoolDNS, usage: "DNS servers for --harvester-ip-pool, comma-separated, e.g. 10.0.0.2,10.0.0.3; of the pool's family, or of both for a dual-stack pool (e.g. 10.0.0.2,2001:db8::53). Empty: none configured."},
	{name: FlagSSHKeyPairs, usage: "More Harvester SSH key pairs whose public keys are installed for the SSH user, beside the driver's own key: for the people who log in to the nodes. Comma-separated namespace/name or name (in the VM namespace), at most 32; each must exist and be validated by Harvester. No private key is needed. Empty: none."},
	{name: FlagOS, applied: DefaultOS, usage: "Operating system of the guest: linux, the only one (the driver boots its guests with cloud-init; Windows guests need cloudbase-init, which it does not build for). rancher-machine reads it to write Rancher's install script into the cloud-config. Default: linux."},
	{name: FlagPersistentTPM, kind: boolFlag, usage: "Keep the virtual TPM's state across reboots and migrations (needs --harvester-enable-tpm). KubeVirt stores it in a volume of Harvester's vmstate-persistence storage class (Longhorn)."},
	{name: FlagMachineType, usage: "Machine type of the VM: q35 or pc-q35-<version> on x86_64 hosts (e.g. pc-q35-rhel9.6.0), virt or virt-<version> on arm64 hosts (what KubeVirt emulates by default; pc/i440fx is not). Empty: KubeVirt's default (q35 on x86_64)."},
	{name: FlagIPPoolDNSSearch, usage: "DNS search domains for --harvester-ip-pool, comma-separated, e.g. example.com,corp.example.com (lowercase DNS names, at most 32 of them and 2,048 characters in all, the bounds Kubernetes puts on a pod's search list; needs --harvester-ip-pool-dns: cloud-init skips search domains without servers). Empty: none."},
	{name: FlagVMPatch, usage: `A change to the VM the driver builds, for the KubeVirt and Harvester fields no flag covers: a JSON merge patch (RFC 7386), a JSON object such as {"spec":{"template":{"spec":{"terminationGracePeriodSeconds":60}}}}, or a JSON patch (RFC 6902), a JSON list of operations such as [{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"ml"}]; as JSON, base64 of JSON or the path of a file holding it; at most 64 KiB and 256 operations. It may not change what the driver owns: the VM's name, namespace and metadata other than labels and annotations, the driver's own labels and annotations, the cloud-init disk, volume and Secret, the disks' claims, the run strategy and the status. A Secret, ConfigMap or ServiceAccount it gives the guest needs the label node-driver.harvesterhci.io/vm-patch-allowed=true, set on it in Harvester by an admin. Empty: none.`},
	{name: FlagUserDataSecret, usage: "Your cloud-init user data kept in Harvester instead of the machine config: the Secret in the VM namespace that holds it, as NAME or NAME:KEY (KEY: the key holding it; default userdata, else userData, as KubeVirt reads a cloud-init Secret). The driver reads it at create time (the credential must be allowed to get secrets there) and merges it as it merges --harvester-user-data, which it replaces; it never copies, changes or deletes the Secret. It refuses a Secret a node driver made (label harvesterhci.io/creator), one a VM owns and a service account's token. The value is the user data as cloud-init reads it (cloud-config, shell script, MIME multipart or gzip of them), at most 1 MiB. Empty: none."},
	{name: FlagNetworkDataSecret, usage: "cloud-init network-config (version 1 or 2) kept in Harvester: the Secret in the VM namespace that holds it, as NAME or NAME:KEY (default key networkdata, else networkData, as KubeVirt reads it), read at create time in place of --harvester-network-data; not with --harvester-ip-pool. It refuses a Secret a node driver made (label harvesterhci.io/creator), one a VM owns and a service account's token. Empty: none."},
	{name: FlagPersistentEFI, kind: boolFlag, usage: "Keep the EFI firmware's variables (boot entries, Secure Boot keys) across reboots and migrations (needs --harvester-enable-efi). KubeVirt stores them in a volume of Harvester's vmstate-persistence storage class (Longhorn), as for --harvester-persistent-tpm; Harvester 1.5 or later."},
	{name: FlagBlockMultiQueue, kind: boolFlag, usage: "Give each virtio disk as many I/O queues as the VM has vCPUs (KubeVirt's blockMultiQueue), so that the guest's CPUs submit disk I/O in parallel."},
	{name: FlagIOThreadsPolicy, usage: "Run the virtio disks' I/O in I/O threads, outside the vCPUs and QEMU's main loop (KubeVirt's ioThreadsPolicy): shared (one thread for every disk without a dedicated one), auto (one per disk, at most twice the vCPUs) or supplementalPool (a pool of --harvester-io-thread-count threads every virtio disk uses, dedicatedIOThread or not). Empty: none, except for the disks with dedicatedIOThread in --harvester-disk-info."},
	{name: FlagIOThreadCount, usage: "Number of I/O threads of the supplementalPool policy (1 to 4294967295; required with it, and only with it). Empty or 0: none."},
	{name: FlagIPPoolName, usage: "The address of the first NIC (a bridge on a VM network) leased from an IPPool of Harvester's managed DHCP (the vm-dhcp-controller add-on, Harvester 1.9 or later), as namespace/name or name (in the network's namespace); the IPPool must serve that network. The controller leases each machine a free address of the pool, the driver pins it to the VM as a static lease (annotation static-ip.harvesterhci.io/nic-0) and the guest takes it by DHCP on the first NIC, whose MAC address the driver derives for each machine. The lease shows in Harvester beside those of VMs made there, and is released when the machine's VM is deleted. Not with --harvester-ip-pool or a macAddress on the first NIC; with --harvester-network-data version 2 only, its ethernets matched by macaddress. Empty: none."},
}

// usageDefault is the value a usage text names as the default: "Default: 900.".
var usageDefault = regexp.MustCompile(`Default: ([A-Za-z0-9.-]*[A-Za-z0-9])\.`)

// UsageDefault is the default a flag's usage names ("Default: virtio." gives virtio), or "": the default the
// driver applies to a flag that declares none (config's tests hold every such flag to that sentence).
func UsageDefault(usage string) string {
	if m := usageDefault.FindStringSubmatch(usage); m != nil {
		return m[1]
	}
	return ""
}

// EnvVar is the environment variable of a flag: HARVESTER_ + the upper-snake suffix, as the reference has them.
func EnvVar(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(name, flagPrefix), "-", "_"))
}

// CreateFlags returns the flag table as rancher-machine's flags, each with its environment variable and default.
func CreateFlags() []mcnflag.Flag {
	flags := make([]mcnflag.Flag, 0, len(flagTable))
	for _, f := range flagTable {
		switch f.kind {
		case stringFlag:
			flags = append(flags, &mcnflag.StringFlag{Name: f.name, EnvVar: EnvVar(f.name), Usage: f.usage, Value: f.str})
		case intFlag:
			flags = append(flags, &mcnflag.IntFlag{Name: f.name, EnvVar: EnvVar(f.name), Usage: f.usage, Value: f.num})
		case boolFlag:
			flags = append(flags, &mcnflag.BoolFlag{Name: f.name, EnvVar: EnvVar(f.name), Usage: f.usage})
		}
	}
	return flags
}
