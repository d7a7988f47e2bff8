package config

import (
	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// ParseConfig turns the flag values of one machine into a validated Config. It reads only the flags and local
// files (the Rancher user-data file, the SSH private key); it never contacts the cluster. It runs in two passes:
// each group of flags is parsed into the Config (groups), then the rules across the Config's fields are applied
// (rules, validate.go). Every problem of both is collected and returned together in a *ConfigError, each naming
// its flag and the accepted format.
//
// replace are rules of packages above config that check a field in full where config can check it only in part;
// each takes the place of config's rule of the same name (objects.Rules: the user data, merged as a create
// merges it).
func ParseConfig(machineName string, opts drivers.DriverOptions, replace ...Rule) (*Config, error) {
	var p Problems
	if checkValueSizes(&p, opts); len(p.List) > 0 {
		return nil, p.Err()
	}
	cfg := &Config{MachineName: machineName, given: map[string]bool{}}
	parsed := make([]Problems, len(groups))
	for i, g := range groups {
		g.parse(&parsed[i], opts, cfg)
	}
	if err := validate(cfg, parsed, replace).Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// A group is the flags that make one part of the Config, read by one parser. The parser reads only those flags
// (and the VM namespace, parsed first, as the namespace of the names it reads), fills its part of the Config
// and reports what is wrong with the values as given: their format, their range, and how the flags of the
// group go together. What is wrong between parts of the Config is a Rule's.
type group struct {
	name  string
	parse func(p *Problems, opts drivers.DriverOptions, cfg *Config)
}

// groups are parsed in this order, and their problems are reported in it, each group's followed by those of the
// rules after it.
var groups = []group{
	{"machine name", parseMachineName},
	{"namespace", parseNamespace},
	{"cluster name", parseClusterName},
	{"kubeconfig", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.Kubeconfig = ParseKubeconfig(p, opts.String(FlagKubeconfigContent))
	}},
	{"size", parseSize},
	{"cpu", parseCPU},
	{"firmware", parseFirmware},
	{"machine type", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.MachineType = parseMachineType(p, opts.String(FlagMachineType))
	}},
	{"disks", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.Disks = parseDisks(p, opts, cfg.Namespace)
	}},
	{"NICs", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.NICs = parseNICs(p, opts, cfg.Namespace)
	}},
	{"devices", parseDevices},
	{"maintenance and labels", parseMaintenanceAndLabels},
	{"placement", parsePlacement},
	{"SSH", func(p *Problems, opts drivers.DriverOptions, cfg *Config) { cfg.SSH = parseSSH(p, opts, cfg.Namespace) }},
	{"cloud-init", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.UserData, cfg.RancherUserData, cfg.NetworkData = parseCloudInit(p, opts)
		cfg.InstallGuestAgent = !opts.Bool(FlagSkipGuestAgent)
	}},
	{"cloud provider", parseCloudProvider},
	{"IP pool", parseIPPool},
	{"OS", func(p *Problems, opts drivers.DriverOptions, _ *Config) { parseOS(p, opts.String(FlagOS)) }},
	{"create timeout", func(p *Problems, opts drivers.DriverOptions, cfg *Config) {
		cfg.CreateTimeout = parseCreateTimeout(p, opts.String(FlagCreateTimeout))
	}},
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
