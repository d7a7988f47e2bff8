package config

import (
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// ParseConfig turns the flag values of one machine into a validated Config. It reads only the flags and local
// files (the Rancher user-data file, the SSH private key); it never contacts the cluster. Every problem is
// collected and returned together in a *ConfigError, each naming its flag and the accepted format.
func ParseConfig(machineName string, opts drivers.DriverOptions) (*Config, error) {
	var p Problems
	if checkValueSizes(&p, opts); len(p.List) > 0 {
		return nil, p.Err()
	}
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

	cfg.CPUs = inRange(&p, FlagCPUCount, opts.Int(FlagCPUCount), MaxCPUs, "a positive whole number of cores")
	cfg.MemoryGiB = inRange(&p, FlagMemorySize, opts.Int(FlagMemorySize), MaxGiB, "a positive whole number of GiB")
	cfg.ReservedMemoryMiB = parseReservedMemory(&p, opts.Int(FlagReservedMemorySize), cfg.MemoryGiB)
	cfg.CPUModel = strings.TrimSpace(opts.String(FlagCPUModel))
	if cfg.CPUModel != "" && !cpuModel.MatchString(cfg.CPUModel) {
		p.Addf(FlagCPUModel, "must be a CPU model name of letters, digits, '-', '_' and '.' (e.g. host-passthrough, Skylake-Server), got %q", cfg.CPUModel)
	}
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
	cfg.TPMPersistent = opts.Bool(FlagPersistentTPM)
	if cfg.TPMPersistent && !cfg.TPM {
		p.Addf(FlagPersistentTPM, "needs --%s: it keeps the state of the VM's virtual TPM, and there is none", FlagEnableTPM)
	}
	cfg.MachineType = parseMachineType(&p, opts.String(FlagMachineType))

	cfg.Disks = parseDisks(&p, opts, cfg.Namespace)
	cfg.NICs = parseNICs(&p, opts, cfg.Namespace)
	checkBootOrders(&p, cfg.Disks, cfg.NICs)
	cfg.VGPUs = parseVGPUs(&p, opts.String(FlagVGPUInfo))
	cfg.HostDevices = parseHostDevices(&p, opts.String(FlagHostDeviceInfo), cfg.VGPUs)
	nameDevices(cfg.VGPUs, cfg.HostDevices)
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
	cfg.IPPool, cfg.IPPool6 = parseIPPool(&p, opts, cfg)
	parseOS(&p, opts.String(FlagOS))

	cfg.CreateTimeout = parseCreateTimeout(&p, opts.String(FlagCreateTimeout))

	if err := p.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// maxValueSize is the longest value a flag takes: the cloud-init and kubeconfig flags carry documents of up to
// userdata.MaxSize, perhaps base64-encoded (a third larger); the others carry names, numbers and short JSON.
func maxValueSize(flag string) int {
	switch flag {
	case FlagUserData, FlagNetworkData, FlagCloudConfig, FlagKubeconfigContent, FlagCloudProviderConfig:
		return userdata.MaxSize/3*4 + 4
	}
	return 64 << 10
}

// checkValueSizes refuses every value longer than its flag takes, before anything reads it.
func checkValueSizes(p *Problems, opts drivers.DriverOptions) {
	for _, f := range flagTable {
		if f.kind != stringFlag {
			continue
		}
		if n, limit := len(opts.String(f.name)), maxValueSize(f.name); n > limit {
			p.Addf(f.name, "is %s long, over the %s this flag takes", userdata.FormatSize(int64(n)), userdata.FormatSize(int64(limit)))
		}
	}
}

// cpuModel is the form of libvirt's CPU model names (host-passthrough, host-model, Skylake-Server-IBRS, EPYC-Rome,
// qemu64): nothing that could break the domain XML or a log line.
var cpuModel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// machineType is the form of the machine types KubeVirt emulates by default (kubevirt/kubevirt
// pkg/virt-config/virt-config.go: DefaultAMD64EmulatedMachines "q35*,pc-q35*", DefaultAARCH64EmulatedMachines
// "virt*"; Harvester's KubeVirt configuration sets no emulatedMachines): q35, pc-q35-<version>, virt,
// virt-<version>. KubeVirt's admitter matches them against the host architecture's list
// (pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go, validateEmulatedMachine).
var machineType = regexp.MustCompile(`^(q35|virt|(pc-q35|virt)-[A-Za-z0-9][A-Za-z0-9._-]{0,62})$`)

// parseMachineType reads --harvester-machine-type; "" leaves KubeVirt's default.
func parseMachineType(p *Problems, raw string) string {
	v := strings.TrimSpace(raw)
	if v != "" && !machineType.MatchString(v) {
		p.Addf(FlagMachineType, "must be a machine type KubeVirt emulates: q35 or pc-q35-<version> on x86_64 hosts (e.g. pc-q35-rhel9.6.0), virt or virt-<version> on arm64 hosts; got %q", raw)
	}
	return v
}

// The largest numbers the flags accept: what the objects they end up in can hold, so that no value wraps around
// or turns negative on its way to Harvester.
const (
	// MaxCPUs is the most cores KubeVirt's CPU topology holds (kubevirt.io/api core/v1 CPU.Cores is a uint32).
	MaxCPUs = math.MaxUint32
	// MaxGiB is the largest size in GiB whose byte count fits a Kubernetes quantity (an int64): memory, disks.
	MaxGiB = math.MaxInt64 >> 30
	// MaxCreateTimeoutSecs is the longest timeout a time.Duration holds (about 292 years).
	MaxCreateTimeoutSecs = math.MaxInt64 / int64(time.Second)
)

// inRange returns v, recording a problem when it is not between 1 and max.
func inRange(p *Problems, flag string, v int, max int64, want string) int {
	switch {
	case v <= 0:
		p.Addf(flag, "must be %s, got %d", want, v)
	case int64(v) > max:
		p.Addf(flag, "must be at most %d, got %d", max, v)
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
