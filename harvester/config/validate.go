package config

import "github.com/harvester/docker-machine-driver-harvester/cloudinit"

// A Rule is one rule of the validation pass, applied once every group of flags is parsed: it reads the Config,
// never the flags, and reports what is wrong between its fields, each problem under the flag to change.
type Rule struct {
	// Name says what the rule holds to be true.
	Name string
	// After is the group of flags whose problems this rule's follow, so that problems read in the order of the
	// flags they are about (see group).
	After group
	Check func(p *Problems, cfg *Config)
}

// rules are the validation pass, in the order they are applied; each reports after its group (Rule.After), and
// after the rules before it of the same group.
var rules = []Rule{
	{"the reserved memory fits in the memory", groupSize, reservedMemoryFits},
	{"an isolated emulator thread needs CPU pinning", groupCPUAndFirmware, emulatorThreadNeedsPinning},
	{"Secure Boot needs EFI", groupCPUAndFirmware, secureBootNeedsEFI},
	{"a persistent TPM needs a TPM", groupCPUAndFirmware, persistentTPMNeedsTPM},
	{"a persistent EFI needs EFI", groupCPUAndFirmware, persistentEFINeedsEFI},
	{"boot orders are unique across disks and NICs", groupNICs, bootOrdersUnique},
	{"the cloud-provider kubeconfig is the guest's", groupCloudProvider, guestKubeconfigIsScoped},
	{"the cloud-provider kubeconfig is given or generated", groupCloudProvider, givenOrGenerated},
	{"a generated account is named after the guest cluster", groupCloudProvider, generatedAccountNamed},
	{"the cloud-provider server is a generated kubeconfig's", groupCloudProvider, serverForGenerated},
	{"drop-ins and distributions go with a cloud-provider kubeconfig", groupCloudProvider, dropInNeedsKubeconfig},
	{"user data comes from the flag or a Secret", groupCloudInit, oneUserDataSource},
	{"network data comes from the flag or a Secret", groupCloudInit, oneNetworkDataSource},
	{"cloud-init reads each part of the user data", groupCloudProvider, checkCloudInitParts},
	{"the IP pool's NIC is a bridge", groupIPPool, poolNICIsBridge},
	{"the network data leaves the IP pool's NIC alone", groupIPPool, networkDataLeavesPool},
	{"a network-data Secret goes without the IP pool", groupIPPool, networkDataSecretWithoutPool},
	{"the first NIC's address comes from one pool", groupIPPool, oneAddressPool},
	{"the leasing NIC can take a lease", groupIPPool, leaseNICCanLease},
	{"the network data leaves the leasing NIC alone", groupIPPool, networkDataLeavesLease},
	{"a network-data Secret goes without the leased address", groupIPPool, networkDataSecretWithoutLease},
}

// validate is the validation pass: it applies the rules to cfg, each reporting in found[its group], after the
// group's own problems.
func validate(found *[groups]Problems, cfg *Config) {
	for _, rule := range rules {
		rule.Check(&found[rule.After], cfg)
	}
}

// reservedMemoryFits: --harvester-reserved-memory-size must leave the guest some of its memory.
func reservedMemoryFits(p *Problems, cfg *Config) {
	mib, gib := cfg.ReservedMemoryMiB, cfg.MemoryGiB
	if mib > 0 && gib > 0 && mib >= gib*1024 {
		p.Addf(FlagReservedMemorySize, "%d MiB must be less than the VM memory (%d GiB = %d MiB)", mib, gib, gib*1024)
	}
}

func emulatorThreadNeedsPinning(p *Problems, cfg *Config) {
	if cfg.IsolateEmulatorThread && !cfg.CPUPinning {
		p.Addf(FlagIsolateEmulatorThread, "needs --%s: KubeVirt isolates the emulator thread only for VMs with dedicated CPUs", FlagCPUPinning)
	}
}

func secureBootNeedsEFI(p *Problems, cfg *Config) {
	if cfg.SecureBoot && !cfg.EFI {
		p.Addf(FlagEnableSecureBoot, "needs --%s: Secure Boot is a feature of EFI firmware", FlagEnableEFI)
	}
}

func persistentTPMNeedsTPM(p *Problems, cfg *Config) {
	if cfg.TPMPersistent && !cfg.TPM {
		p.Addf(FlagPersistentTPM, "needs --%s: it keeps the state of the VM's virtual TPM, and there is none", FlagEnableTPM)
	}
}

// persistentEFINeedsEFI: the EFI state kept is the variables of EFI firmware (KubeVirt's EFI.Persistent), as
// Harvester's VM form offers it only with "Booting in EFI mode" (harvester/harvester#7557).
func persistentEFINeedsEFI(p *Problems, cfg *Config) {
	if cfg.EFIPersistent && !cfg.EFI {
		p.Addf(FlagPersistentEFI, "needs --%s: it keeps the variables of the VM's EFI firmware, and the VM boots with BIOS", FlagEnableEFI)
	}
}

// bootOrdersUnique rejects boot orders used twice: KubeVirt requires them unique across disks and interfaces
// (kubevirt/kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go, validateBootOrder).
// A NIC's clash is filed under --harvester-network-info, naming the flag that gave the disk its order (the legacy
// root disk has order 1).
func bootOrdersUnique(p *Problems, cfg *Config) {
	type device struct{ name, flag string }
	seen := map[uint]device{}
	for _, d := range cfg.Disks {
		if d.BootOrder == 0 {
			continue
		}
		if other, dup := seen[d.BootOrder]; dup {
			p.Addf(FlagDiskInfo, "%s and %s both have bootOrder %d; boot orders must be unique", other.name, d.Name, d.BootOrder)
			continue
		}
		seen[d.BootOrder] = device{d.Name, d.Flag}
	}
	for _, n := range cfg.NICs {
		if n.BootOrder == 0 {
			continue
		}
		if other, dup := seen[n.BootOrder]; dup {
			p.Addf(FlagNetworkInfo, "%s has bootOrder %d, as %s of --%s has; boot orders must be unique across disks and NICs", n.Name, n.BootOrder, other.name, other.flag)
			continue
		}
		seen[n.BootOrder] = device{n.Name, n.Flag}
	}
}

// checkCloudInitParts reads each part of cloud-init's input a user writes on its own (cloudinit.CheckParts):
// the user data, Rancher's cloud-config and the SSH password, every broken one reported at once and filed
// under its flag. How they merge with each other and with the driver's own parts is the builders' to check
// (harvester/objects ParseConfig, once these read).
func checkCloudInitParts(p *Problems, cfg *Config) {
	if err := cloudinit.CheckParts(cfg.UserData, cfg.RancherUserData, cfg.SSH.Password); err != nil {
		p.AddCloudInit(cfg, err)
	}
}
