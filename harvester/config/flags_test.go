package config

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/drivers"
	"github.com/rancher/machine/libmachine/mcnflag"
)

// rancherFieldName is Rancher's flag → schema field conversion (pkg/controllers/management/drivers/nodedriver
// ToLowerCamelCase): drop the part up to the first "-", then lowerCamel the rest.
func rancherFieldName(flag string) (string, bool) {
	_, rest, ok := strings.Cut(flag, "-")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "-")
	name := parts[0]
	for _, p := range parts[1:] {
		if p == "" {
			return "", false
		}
		name += strings.ToUpper(p[:1]) + p[1:]
	}
	return name, true
}

var camelBoundary = regexp.MustCompile(`([a-z])([A-Z])`)

// rancherArgName is Rancher's field → command-line flag conversion (pkg/controllers/capr/machineprovision
// args.go): "--harvester-" + kebab case, where only a lowercase letter before a capital splits.
func rancherArgName(field string) string {
	return "harvester-" + strings.ToLower(camelBoundary.ReplaceAllString(field, "$1-$2"))
}

func TestFlagsRoundTripThroughRancher(t *testing.T) {
	for _, f := range CreateFlags() {
		name := f.String()
		if !strings.HasPrefix(name, flagPrefix) {
			t.Errorf("%s: Rancher drops the part before the first '-', so every flag must start with %q", name, flagPrefix)
			continue
		}
		field, ok := rancherFieldName(name)
		if !ok {
			t.Errorf("%s: Rancher cannot turn it into a field name", name)
			continue
		}
		if back := rancherArgName(field); back != name {
			t.Errorf("%s → field %s → %s: Rancher would send a flag the driver does not know", name, field, back)
		}
	}
}

func TestBoolFlagsDefaultFalse(t *testing.T) {
	// Rancher sends a bool only when it is true, so a true default could never be turned off from Rancher.
	// mcnflag.BoolFlag has no default at all; assert the table does not pretend otherwise.
	for _, f := range flagTable {
		if f.kind == boolFlag && (f.str != "" || f.num != 0) {
			t.Errorf("%s: a bool flag cannot have a default", f.name)
		}
	}
	for _, f := range CreateFlags() {
		if b, ok := f.(*mcnflag.BoolFlag); ok && b.Default() != false {
			t.Errorf("%s defaults to %v", b.Name, b.Default())
		}
	}
}

// fakeDriver exposes a flag list to rancher/machine's own flag classification.
type fakeDriver struct {
	drivers.Driver
	flags []mcnflag.Flag
}

func (f fakeDriver) GetCreateFlags() []mcnflag.Flag { return f.flags }

func TestUserDataFlagIsCloudConfig(t *testing.T) {
	d := fakeDriver{flags: CreateFlags()}
	// rancher-machine writes Rancher's install script into the file named by this flag.
	if got := drivers.DriverUserdataFlag(d); got != FlagCloudConfig {
		t.Fatalf("rancher-machine's userdata flag is %q, want %q", got, FlagCloudConfig)
	}
	// With --custom-install-script rancher-machine reads the OS flag's value as a string, and warns on every
	// create ("Trying to access option  which does not exist", "Type assertion did not go smoothly") when there is
	// none; a value containing "windows" would make it write a PowerShell script for cloudbase-init.
	if got := drivers.DriverOSFlag(d); got != FlagOS {
		t.Errorf("rancher-machine reads %q as the OS flag, want %q", got, FlagOS)
	}
	for _, f := range CreateFlags() {
		if f.String() != FlagOS {
			continue
		}
		if def, ok := f.Default().(string); !ok || def != "linux" {
			t.Errorf("%s defaults to %#v, want the string linux (rancher-machine's cloud-config for a Linux guest)", FlagOS, f.Default())
		}
	}
	var matching []string
	for _, f := range CreateFlags() {
		n := f.String()
		for _, s := range []string{"user-data", "userdata", "custom-data", "cloud-config"} {
			if strings.Contains(n, s) {
				matching = append(matching, n)
				break
			}
		}
	}
	want := []string{FlagCloudConfig, FlagUserData}
	if strings.Join(matching, ",") != strings.Join(want, ",") {
		t.Errorf("flags rancher-machine treats as user data: %v, want exactly %v in that order", matching, want)
	}
}

// referenceFlags are the reference driver's 32 flags: name, type and default. Stored Rancher configs and
// Terraform configs send them, so each must exist unchanged.
var referenceFlags = []struct {
	name string
	kind flagKind
	def  any
}{
	{FlagKubeconfigContent, stringFlag, ""}, {FlagClusterType, stringFlag, ""}, {FlagClusterID, stringFlag, ""},
	{FlagClusterName, stringFlag, ""}, {FlagVMNamespace, stringFlag, "default"}, {FlagCPUCount, intFlag, 2},
	{FlagMemorySize, intFlag, 4}, {FlagDiskSize, intFlag, 0}, {FlagDiskBus, stringFlag, ""},
	{FlagImageName, stringFlag, ""}, {FlagDiskInfo, stringFlag, ""}, {FlagSSHUser, stringFlag, "root"},
	{FlagSSHPort, intFlag, 22}, {FlagSSHPassword, stringFlag, ""}, {FlagKeyPairName, stringFlag, ""},
	{FlagSSHPrivateKeyPath, stringFlag, ""}, {FlagNetworkType, stringFlag, ""}, {FlagNetworkName, stringFlag, ""},
	{FlagNetworkModel, stringFlag, ""}, {FlagNetworkInfo, stringFlag, ""}, {FlagCloudConfig, stringFlag, ""},
	{FlagUserData, stringFlag, ""}, {FlagNetworkData, stringFlag, ""}, {FlagVMAffinity, stringFlag, ""},
	{FlagEnableEFI, boolFlag, false}, {FlagEnableSecureBoot, boolFlag, false}, {FlagVGPUInfo, stringFlag, ""},
	{FlagCPUPinning, boolFlag, false}, {FlagIsolateEmulatorThread, boolFlag, false}, {FlagEnableTPM, boolFlag, false},
	{FlagReservedMemorySize, intFlag, -1}, {FlagCPUModel, stringFlag, ""},
}

func TestReferenceFlagsKept(t *testing.T) {
	if len(referenceFlags) != 32 {
		t.Fatalf("the reference list has %d flags, want 32", len(referenceFlags))
	}
	byName := map[string]mcnflag.Flag{}
	for _, f := range CreateFlags() {
		if _, dup := byName[f.String()]; dup {
			t.Errorf("flag %s declared twice", f.String())
		}
		byName[f.String()] = f
	}
	for i, ref := range referenceFlags {
		f, ok := byName[ref.name]
		if !ok {
			t.Errorf("reference flag %s is missing", ref.name)
			continue
		}
		if got := CreateFlags()[i].String(); got != ref.name {
			t.Errorf("flag %d is %s, want %s (keep the reference order)", i, got, ref.name)
		}
		wantEnv := "HARVESTER_" + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(ref.name, "harvester-"), "-", "_"))
		var env string
		switch v := f.(type) {
		case *mcnflag.StringFlag:
			env = v.EnvVar
			if ref.kind != stringFlag {
				t.Errorf("%s is a string flag, want kind %d", ref.name, ref.kind)
			}
		case *mcnflag.IntFlag:
			env = v.EnvVar
			if ref.kind != intFlag {
				t.Errorf("%s is an int flag, want kind %d", ref.name, ref.kind)
			}
		case *mcnflag.BoolFlag:
			env = v.EnvVar
			if ref.kind != boolFlag {
				t.Errorf("%s is a bool flag, want kind %d", ref.name, ref.kind)
			}
		}
		if env != wantEnv {
			t.Errorf("%s: env var %q, want %q", ref.name, env, wantEnv)
		}
		if f.Default() != ref.def {
			t.Errorf("%s: default %v, want %v", ref.name, f.Default(), ref.def)
		}
	}
	if _, ok := byName[FlagClusterName]; !ok {
		t.Errorf("Rancher always appends --%s; the driver must declare it", FlagClusterName)
	}
}

func TestFlagUsageIsWrittenForTheUI(t *testing.T) {
	for _, f := range flagTable {
		if len(f.usage) < 20 || !strings.HasSuffix(f.usage, ".") {
			t.Errorf("%s: usage %q: write a full sentence for the Rancher UI (what, unit or format, default)", f.name, f.usage)
		}
	}
}
