package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// flagsDoc is what `flags --json` prints: the driver's flag table under one driver name, for forms that set the
// flags (the UI extension in ui/ is built from it), and what the credential must be allowed to do.
type flagsDoc struct {
	Driver      string                     `json:"driver"`
	Flags       []flagEntry                `json:"flags"`
	Permissions []harvester.PermissionNeed `json:"permissions"`
}

// flagEntry is one flag. Field is the machine-config field Rancher makes of the flag (the same under every
// driver name); Declared is the default the flag declares to Rancher; Applied the value the driver uses when
// the field is empty (Declared, or the "Default: X." of its usage when it declares none).
type flagEntry struct {
	Flag        string `json:"flag"`
	Field       string `json:"field"`
	Env         string `json:"env"`
	Kind        string `json:"kind"`
	RancherType string `json:"rancherType"`
	Declared    string `json:"declared"`
	Applied     string `json:"applied"`
	Credential  bool   `json:"credential"`
	Group       string `json:"group"`
	Usage       string `json:"usage"`
}

// flagGroups sorts the flags into the sections of a form. Every flag has one (TestFlagsVerbGroupsEveryFlag).
var flagGroups = map[string]string{
	config.FlagKubeconfigContent: "credential", config.FlagClusterType: "compatibility",
	config.FlagClusterID: "compatibility", config.FlagNetworkType: "compatibility",
	config.FlagCloudConfig: "compatibility", config.FlagClusterName: "placement",
	config.FlagVMNamespace: "placement", config.FlagVMAffinity: "placement", config.FlagZone: "placement",
	config.FlagRegion:   "placement",
	config.FlagCPUCount: "instance", config.FlagMemorySize: "instance", config.FlagReservedMemorySize: "instance",
	config.FlagCPUModel: "instance", config.FlagCPUPinning: "instance", config.FlagIsolateEmulatorThread: "instance",
	config.FlagMachineType: "instance", config.FlagEnableEFI: "instance", config.FlagEnableSecureBoot: "instance",
	config.FlagEnableTPM: "instance", config.FlagPersistentTPM: "instance", config.FlagOS: "instance",
	config.FlagPersistentEFI: "instance", config.FlagDiskSize: "disks", config.FlagDiskBus: "disks",
	config.FlagImageName: "disks", config.FlagDiskInfo: "disks",
	config.FlagBlockMultiQueue: "disks", config.FlagIOThreadsPolicy: "disks", config.FlagIOThreadCount: "disks",
	config.FlagNetworkName: "networks", config.FlagNetworkModel: "networks", config.FlagNetworkInfo: "networks",
	config.FlagIPPool: "networks", config.FlagIPPoolGateway: "networks", config.FlagIPPoolDNS: "networks",
	config.FlagIPPoolDNSSearch: "networks", config.FlagIPPoolName: "networks",
	config.FlagVGPUInfo: "devices", config.FlagHostDeviceInfo: "devices",
	config.FlagSSHUser: "access", config.FlagSSHPort: "access", config.FlagSSHPassword: "access",
	config.FlagKeyPairName: "access", config.FlagSSHPrivateKeyPath: "access", config.FlagSSHKeyPairs: "access",
	config.FlagUserData: "cloud-init", config.FlagNetworkData: "cloud-init", config.FlagSkipGuestAgent: "cloud-init",
	config.FlagUserDataSecret: "cloud-init", config.FlagNetworkDataSecret: "cloud-init",
	config.FlagCloudProviderConfig: "cloud-provider", config.FlagGenerateCloudProviderConfig: "cloud-provider",
	config.FlagCloudProviderServer: "cloud-provider", config.FlagCloudProviderForRKE2: "cloud-provider",
	config.FlagCloudProviderDistribution: "cloud-provider", config.FlagCloudProviderDropIn: "cloud-provider",
	config.FlagCreateTimeout: "lifecycle", config.FlagEvictionStrategy: "lifecycle",
	config.FlagMaintenanceStrategy: "lifecycle", config.FlagVMLabels: "lifecycle",
	config.FlagVMPatch: "advanced",
}

// credentialFields are the fields the second name's NodeDriver moves into the cloud credential, private and public
// (internal/nodedriver CredentialFields and PublicCredentialFields, which the shipped binary does not link).
var credentialFields = map[string]bool{"kubeconfigContent": true, "clusterType": true, "clusterId": true}

// flagsVerb runs `flags [--json] [--driver NAME]`: the flag table as JSON, under the executable's driver name
// or NAME.
func flagsVerb(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flags", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("json", true, "print JSON (the only format)")
	driver := fs.String("driver", self.Name(), "the driver name the flags are printed for")
	problems := &config.ArgsError{Problems: config.ParseFlagSet(fs, args)}
	doc, err := flagTable(*driver)
	if err != nil {
		problems.Problemf("%s", err.Error())
	}
	if len(problems.Problems) > 0 {
		fmt.Fprintf(stderr, "flags: %s\nusage: flags [--json] [--driver NAME]\n", problems.Error())
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(stderr, "flags: %v\n", err)
		return 1
	}
	return 0
}

// flagTable is the flag table as driver declares it.
func flagTable(driver string) (flagsDoc, error) {
	canonical := config.CreateFlags()
	names := make([]string, 0, len(canonical))
	for _, f := range canonical {
		names = append(names, f.String())
	}
	id, err := identity.New(driver, names)
	if err != nil {
		return flagsDoc{}, fmt.Errorf("--driver %q: %v", driver, err)
	}
	doc := flagsDoc{Driver: id.Name()}
	for i, f := range id.Flags(canonical) {
		field, err := rancher.FieldOf(f)
		if err != nil {
			return flagsDoc{}, err
		}
		e := flagEntry{Flag: f.String(), Field: field.Name, Env: id.EnvVar(canonical[i].String()), RancherType: field.Type,
			Credential: credentialFields[field.Name], Group: flagGroups[canonical[i].String()], Usage: field.Description}
		switch v := f.(type) {
		case *mcnflag.StringFlag:
			e.Kind, e.Declared = "string", v.Value
		case *mcnflag.IntFlag:
			e.Kind, e.Declared = "int", strconv.Itoa(v.Value)
		case *mcnflag.BoolFlag:
			e.Kind, e.Declared = "bool", "false"
		}
		e.Applied = e.Declared
		if d := config.UsageDefault(e.Usage); e.Declared == "" && d != "" {
			e.Applied = d
		}
		doc.Flags = append(doc.Flags, e)
	}
	// The needs' flags under the driver's name, as the flag table names them.
	for _, p := range harvester.Permissions() {
		flags := make([]string, len(p.Flags))
		for i, f := range p.Flags {
			flags[i] = id.Flag(f)
		}
		p.Flags = flags
		doc.Permissions = append(doc.Permissions, p)
	}
	return doc, nil
}
