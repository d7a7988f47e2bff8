package config

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Config is the validated, typed form of every flag: what one machine is to be. SetConfigFromFlags produces it
// without touching the network; the builders turn it into API objects.
type Config struct {
	MachineName string
	Namespace   string
	ClusterName string // guest cluster; "" outside Rancher

	// Kubeconfig is the Harvester credential (decoded). Empty means $KUBECONFIG. Secret: never logged or persisted.
	Kubeconfig []byte

	CPUs                  int
	MemoryGiB             int
	ReservedMemoryMiB     int // 0: none
	CPUModel              string
	CPUPinning            bool
	IsolateEmulatorThread bool
	EFI                   bool
	SecureBoot            bool
	TPM                   bool
	// TPMPersistent keeps the TPM's state across reboots (KubeVirt's TPMDevice.Persistent); only with TPM.
	TPMPersistent bool
	// EFIPersistent keeps the EFI firmware's variables across reboots (KubeVirt's EFI.Persistent); only with EFI.
	EFIPersistent bool
	// MachineType is KubeVirt's domain.machine.type; "" for KubeVirt's default.
	MachineType string

	Disks []Disk
	// DiskIO is the VM-wide disk performance (--harvester-block-multi-queue, --harvester-io-threads-policy,
	// --harvester-io-thread-count); each disk's own is in its Disk.
	DiskIO DiskIO
	NICs   []NIC
	VGPUs  []VGPU
	// HostDevices are the PCI and USB devices passed through (--harvester-host-device-info).
	HostDevices []HostDevice

	// Labels are the user's extra labels of the VM and its template (--harvester-vm-labels); none of the driver's.
	Labels map[string]string
	// EvictionStrategy is KubeVirt's, for host drains; MaintenanceStrategy the value of Harvester's
	// maintain-mode-strategy label, "" for none (Harvester's default).
	EvictionStrategy    kubevirtv1.EvictionStrategy
	MaintenanceStrategy string

	// Affinity is the user's --harvester-vm-affinity; nil means the default spread across hosts.
	Affinity *corev1.Affinity
	// Zones and Regions restrict the VM to Harvester hosts with these topology labels; empty means any.
	Zones, Regions []string

	SSH SSHConfig

	// UserData is the user's own cloud-init user data (decoded); RancherUserData the document behind
	// --harvester-cloud-config (Rancher's install script); NetworkData the network-config (decoded, validated).
	// All three are secret: never logged or persisted.
	UserData        []byte
	RancherUserData []byte
	NetworkData     []byte
	// UserDataSecret and NetworkDataSecret name the Secrets whose keys hold the user data and the network-config
	// instead of the flags (--harvester-user-data-secret, --harvester-network-data-secret); nil when not given.
	// Their content is read at create time into UserData and NetworkData of the create's copy of the Config
	// (WithSecretData), never into this one, which the lifecycle keeps.
	UserDataSecret, NetworkDataSecret *SecretKeyRef

	InstallGuestAgent bool
	CreateTimeout     time.Duration

	CloudProvider CloudProviderSetup

	// IPPool is where the first NIC's static address comes from; nil without --harvester-ip-pool. For a
	// dual-stack pool it is the IPv4 range, and IPPool6 the IPv6 one; IPPool6 is nil for a single range (of
	// either family).
	IPPool, IPPool6 *IPPool
	// LeasePool is the IPPool of Harvester's managed DHCP the first NIC's address is leased from
	// (--harvester-ip-pool-name); nil without one.
	LeasePool *Ref

	// VMPatch is --harvester-vm-patch, applied by the builders to the VM they build; nil without one.
	VMPatch *VMPatch

	// given are the flags the rules must know were given even when their values did not parse: a rule about
	// what they need still applies. Each parser sets its own, in its own sense of given.
	given givenFlags
}

// givenFlags are the flags of Config.given.
type givenFlags struct {
	cloudProviderConfig bool
	dropIn              []string // the flags that asked for the cloud provider's drop-in, in flag order
	ipPool              bool     // not blank
	leasePool           bool     // --harvester-ip-pool-name not blank, parsed or not
	userDataSecret      bool     // not empty, parsed or not
	networkDataSecret   bool
}

// IPPools are the ranges of --harvester-ip-pool, one per address family (IPv4 first); none without a pool.
func (c *Config) IPPools() []*IPPool {
	var out []*IPPool
	for _, p := range []*IPPool{c.IPPool, c.IPPool6} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// IPPoolOf is the range of --harvester-ip-pool that a, one of the pool's addresses, comes from: the IPv6 range of
// a dual-stack pool for an IPv6 address, else IPPool.
func (c *Config) IPPoolOf(a netip.Addr) *IPPool {
	if c.IPPool6 != nil && a.Is6() {
		return c.IPPool6
	}
	return c.IPPool
}

// CloudProviderSetup is what the guest cluster's Harvester cloud provider gets written into the guest.
type CloudProviderSetup struct {
	Kubeconfig []byte // given kubeconfig (secret); nil when none or generated
	Generate   bool   // make the scoped account at create time
	Server     string // the VIP URL for a generated kubeconfig; "" to discover
	// Distribution is where the guest's distribution reads the kubeconfig (--harvester-cloud-provider-distribution).
	Distribution Distribution
	DropIn       bool // also write the distribution's config drop-in
}

// Enabled reports whether anything is written into the guest for the cloud provider.
func (s CloudProviderSetup) Enabled() bool { return s.Generate || len(s.Kubeconfig) > 0 }

// SSHConfig is how the guest is reached over SSH.
type SSHConfig struct {
	User           string
	Port           int
	Password       string // secret
	KeyPair        *Ref   // Harvester KeyPair whose public key is installed
	PrivateKeyPath string // user-supplied private key; "" means the driver generates one
	// ExtraKeyPairs are the Harvester KeyPairs of people who log in (--harvester-ssh-keypairs): their public keys
	// are installed too; the driver never needs their private halves. None repeats KeyPair.
	ExtraKeyPairs []Ref
}

// Ref names a namespaced Harvester object.
type Ref struct {
	Namespace string
	Name      string
}

// String renders the reference as namespace/name, the form Harvester annotations use.
func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Disk is one VM disk backed by a PVC that Harvester creates from the VM's volumeClaimTemplates.
type Disk struct {
	Name         string // disk-<i>
	Image        *Ref   // cloud image the disk is cloned from; nil for a blank disk
	StorageClass string // blank disks: the class; image disks: must be empty or the image's class
	SizeGiB      int
	Bus          string // virtio, scsi, sata
	CDROM        bool
	BootOrder    uint // 0: not bootable
	HotPlug      bool
	AccessMode   corev1.PersistentVolumeAccessMode
	VolumeMode   corev1.PersistentVolumeMode
	Cache        string // KubeVirt's disk cache mode: none, writethrough, writeback; "" for KubeVirt's choice
	IO           string // KubeVirt's disk I/O mode: native (with Cache none), threads; "" for KubeVirt's choice
	// DedicatedIOThread gives the disk an I/O thread of its own (KubeVirt's Disk.DedicatedIOThread; virtio only).
	DedicatedIOThread bool
	// KeepOnRemove leaves the disk's volume in Harvester when the machine is removed ("autoDelete": false).
	KeepOnRemove bool

	Flag string // the flag that defined the disk, for problems found later (PreCreateCheck)
}

// DiskIO is how the VM's disks do their I/O, VM-wide (KubeVirt's Devices.BlockMultiQueue,
// DomainSpec.IOThreadsPolicy and IOThreads).
type DiskIO struct {
	// BlockMultiQueue gives each virtio disk a queue per vCPU.
	BlockMultiQueue bool
	// ThreadsPolicy is shared, auto or supplementalPool; "" for no I/O threads but the disks' dedicated ones.
	ThreadsPolicy kubevirtv1.IOThreadsPolicy
	// PoolThreads is the supplementalPool policy's number of threads; 0 with the other policies.
	PoolThreads uint32
}

// NIC is one network interface.
type NIC struct {
	Name       string // nic-<i>
	Network    *Ref   // NetworkAttachmentDefinition; nil for the pod network (masquerade)
	MACAddress string
	Model      string
	Masquerade bool // pod network with masquerade binding; otherwise a bridge on Network
	BootOrder  uint // 0: not bootable; else its place among the disks' and NICs' boot orders (network boot)

	Flag string // the flag that defined the NIC
}

// VGPU is one vGPU (mediated device) request.
type VGPU struct {
	// Name is unique among the vGPUs and host devices: Rancher's placeholder "provisioned" is numbered
	// (provisioned, provisioned-1, …; see nameDevices).
	Name       string
	DeviceName string

	placeholder bool // named "provisioned" by the user: Rancher's placeholder, renamed when names collide
}

// PrimaryNIC is the interface whose address is the machine's address: the first NIC, on the first configured
// network. A guest running Kubernetes grows many more interfaces (cni0, flannel.1, …) that must never be picked.
const PrimaryNIC = "nic-0"
