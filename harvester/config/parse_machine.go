package config

import (
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The groups of one value or a few switches: the machine's name, namespace and cluster, its size, CPU, firmware
// and machine type.

// parseMachineName checks the machine's name, which names its VM; its problems name no flag.
func parseMachineName(p *Problems, _ drivers.DriverOptions, cfg *Config) {
	if err := checkVMName(cfg.MachineName); err != nil {
		p.Addf("", "%v", err)
	}
}

// parseNamespace reads --harvester-vm-namespace.
func parseNamespace(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.Namespace = opts.String(FlagVMNamespace)
	if msgs := validation.IsDNS1123Label(cfg.Namespace); len(msgs) > 0 {
		p.Addf(FlagVMNamespace, "must be a Kubernetes namespace name (lowercase letters, digits and '-'), got %q", cfg.Namespace)
	}
}

// parseClusterName reads --harvester-cluster-name, which labels what the driver makes.
func parseClusterName(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.ClusterName = opts.String(FlagClusterName)
	if msgs := validation.IsValidLabelValue(cfg.ClusterName); len(msgs) > 0 {
		p.Addf(FlagClusterName, "must be a valid label value (at most 63 letters, digits, '-', '_' or '.'), got %q", cfg.ClusterName)
	}
}

// parseSize reads the cores, the memory and the memory reserved for the VM's own overhead.
func parseSize(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.CPUs = inRange(p, FlagCPUCount, opts.Int(FlagCPUCount), MaxCPUs, "a positive whole number of cores")
	cfg.MemoryGiB = inRange(p, FlagMemorySize, opts.Int(FlagMemorySize), MaxGiB, "a positive whole number of GiB")
	cfg.ReservedMemoryMiB = parseReservedMemory(p, opts.Int(FlagReservedMemorySize))
}

// parseCPU reads the CPU model and the CPU pinning flags.
func parseCPU(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.CPUModel = strings.TrimSpace(opts.String(FlagCPUModel))
	if cfg.CPUModel != "" && !cpuModel.MatchString(cfg.CPUModel) {
		p.Addf(FlagCPUModel, "must be a CPU model name of letters, digits, '-', '_' and '.' (e.g. host-passthrough, Skylake-Server), got %q", cfg.CPUModel)
	}
	cfg.CPUPinning = opts.Bool(FlagCPUPinning)
	cfg.IsolateEmulatorThread = opts.Bool(FlagIsolateEmulatorThread)
}

// parseFirmware reads the EFI, Secure Boot and TPM flags.
func parseFirmware(_ *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.EFI = opts.Bool(FlagEnableEFI)
	cfg.SecureBoot = opts.Bool(FlagEnableSecureBoot)
	cfg.TPM = opts.Bool(FlagEnableTPM)
	cfg.TPMPersistent = opts.Bool(FlagPersistentTPM)
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

// parseReservedMemory reads --harvester-reserved-memory-size (MiB): -1 (the default) or 0 mean unset. That it
// leaves the guest some of its memory is a rule (reservedMemoryFits).
func parseReservedMemory(p *Problems, mib int) int {
	switch {
	case mib == DefaultReservedMemoryMiB || mib == 0:
		return 0
	case mib < 0:
		p.Addf(FlagReservedMemorySize, "must be a positive whole number of MiB, or -1 for Harvester's default, got %d", mib)
	}
	return mib
}
