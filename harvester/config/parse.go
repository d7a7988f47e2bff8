package config

import (
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseConfig turns the flag values of one machine into a validated Config. It reads only the flags and local
// files (the Rancher user-data file, the SSH private key); it never contacts the cluster. Every problem is
// collected and returned together in a *ConfigError, each naming its flag and the accepted format.
func ParseConfig(machineName string, opts drivers.DriverOptions) (*Config, error) {
	var p Problems
	cfg := &Config{MachineName: machineName}
	if err := checkVMName(machineName); err != nil {
		p.Addf("", "%v", err)
	}

	cfg.Namespace = opts.String(FlagVMNamespace)
	if msgs := validation.IsDNS1123Label(cfg.Namespace); len(msgs) > 0 {
		p.Addf(FlagVMNamespace, "must be a Kubernetes namespace name (lowercase letters, digits and '-'), got %q", cfg.Namespace)
	}
	cfg.ClusterName = opts.String(FlagClusterName)
	if msgs := validation.IsValidLabelValue(cfg.ClusterName); len(msgs) > 0 {
		p.Addf(FlagClusterName, "must be a valid label value (at most 63 letters, digits, '-', '_' or '.'), got %q", cfg.ClusterName)
	}
	cfg.Kubeconfig = ParseKubeconfig(&p, opts.String(FlagKubeconfigContent))

	cfg.CPUs = positive(&p, FlagCPUCount, opts.Int(FlagCPUCount), "a positive whole number of cores")
	cfg.MemoryGiB = positive(&p, FlagMemorySize, opts.Int(FlagMemorySize), "a positive whole number of GiB")
	cfg.ReservedMemoryMiB = parseReservedMemory(&p, opts.Int(FlagReservedMemorySize), cfg.MemoryGiB)
	cfg.CPUModel = strings.TrimSpace(opts.String(FlagCPUModel))
	cfg.CPUPinning = opts.Bool(FlagCPUPinning)
	cfg.IsolateEmulatorThread = opts.Bool(FlagIsolateEmulatorThread)
	if cfg.IsolateEmulatorThread && !cfg.CPUPinning {
		p.Addf(FlagIsolateEmulatorThread, "needs --%s: KubeVirt isolates the emulator thread only for VMs with dedicated CPUs", FlagCPUPinning)
	}
	cfg.EFI = opts.Bool(FlagEnableEFI)
	cfg.SecureBoot = opts.Bool(FlagEnableSecureBoot)
	if cfg.SecureBoot && !cfg.EFI {
		p.Addf(FlagEnableSecureBoot, "needs --%s: Secure Boot is a feature of EFI firmware", FlagEnableEFI)
	}
	cfg.TPM = opts.Bool(FlagEnableTPM)

	cfg.Disks = parseDisks(&p, opts, cfg.Namespace)
	cfg.NICs = parseNICs(&p, opts, cfg.Namespace)
	cfg.VGPUs = parseVGPUs(&p, opts.String(FlagVGPUInfo))
	cfg.HostDevices = parseHostDevices(&p, opts.String(FlagHostDeviceInfo), cfg.VGPUs)
	cfg.EvictionStrategy, cfg.MaintenanceStrategy = parseStrategies(&p, opts)
	cfg.Labels = parseVMLabels(&p, opts.String(FlagVMLabels), cfg.MaintenanceStrategy != "")
	cfg.Affinity = parseAffinity(&p, opts.String(FlagVMAffinity))
	cfg.Zones = parseTopologyList(&p, FlagZone, opts.String(FlagZone))
	cfg.Regions = parseTopologyList(&p, FlagRegion, opts.String(FlagRegion))
	cfg.SSH = parseSSH(&p, opts, cfg.Namespace)

	cfg.UserData, cfg.RancherUserData, cfg.NetworkData = parseCloudInit(&p, opts)
	cfg.InstallGuestAgent = !opts.Bool(FlagSkipGuestAgent)
	cfg.CloudProvider = parseCloudProvider(&p, opts, cfg)
	checkCloudInit(&p, cfg)
	cfg.IPPool = parseIPPool(&p, opts, cfg)
	parseOS(&p, opts.String(FlagOS))

	timeout := opts.Int(FlagCreateTimeout)
	if timeout <= 0 {
		p.Addf(FlagCreateTimeout, "must be a positive whole number of seconds, got %d", timeout)
	}
	cfg.CreateTimeout = time.Duration(timeout) * time.Second

	if err := p.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// positive returns v, recording a problem when it is not > 0.
func positive(p *Problems, flag string, v int, want string) int {
	if v <= 0 {
		p.Addf(flag, "must be %s, got %d", want, v)
	}
	return v
}

// parseReservedMemory reads --harvester-reserved-memory-size (MiB): -1 (the default) or 0 mean unset; otherwise
// it must leave the guest some of its memory.
func parseReservedMemory(p *Problems, mib, memoryGiB int) int {
	switch {
	case mib == DefaultReservedMemoryMiB || mib == 0:
		return 0
	case mib < 0:
		p.Addf(FlagReservedMemorySize, "must be a positive whole number of MiB, or -1 for Harvester's default, got %d", mib)
	case memoryGiB > 0 && mib >= memoryGiB*1024:
		p.Addf(FlagReservedMemorySize, "%d MiB must be less than the VM memory (%d GiB = %d MiB)", mib, memoryGiB, memoryGiB*1024)
	}
	return mib
}
