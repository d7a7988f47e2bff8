package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/drivers"
	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// Rancher names a flag's HarvesterConfig field after the part behind "harvester-" and turns the field back into
// the flag it passes; both its rules, before 2.13 and since (rancher/rancher#52145: a digit before a capital
// splits too), must give back the flag, and its environment variable for a cloud-credential key of that field
// must be the flag's (rancher/rancher pkg/controllers/capr/machineprovision/args.go, toArgs and
// getArgsEnvAndStatus; the rules live in internal/rancher).
func TestFlagsRoundTripThroughRancher(t *testing.T) {
	for _, f := range CreateFlags() {
		name := f.String()
		if !strings.HasPrefix(name, flagPrefix) {
			t.Errorf("%s: Rancher drops the part before the first '-', so every flag must start with %q", name, flagPrefix)
			continue
		}
		field, err := rancher.FieldName(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, r := range rancher.Rules {
			if back := r.Flag("harvester", field); back != "--"+name {
				t.Errorf("%s → field %s → %s under %s: Rancher would send a flag the driver does not know", name, field, back, r.Name)
			}
			if env := r.Env("harvester", "harvestercredentialConfig-"+field); env != EnvVar(name) {
				t.Errorf("%s → field %s → $%s under %s, want $%s", name, field, env, r.Name, EnvVar(name))
			}
		}
	}
}

// Rancher makes each flag's declared value a default of its HarvesterConfig CRD (internal/rancher FieldOf), and
// the API server fills that default into every stored HarvesterConfig it reads. The flags beyond the reference
// 32 therefore declare only what Rancher leaves off the command line ("" and false, args.go toArgs), and the
// driver applies their defaults itself: an upgraded driver changes no existing pool's command line.
func TestNewFlagsDeclareNoValue(t *testing.T) {
	flags := CreateFlags()
	for i, spec := range flagTable {
		if i < len(referenceFlags) {
			if spec.applied != "" {
				t.Errorf("%s: a reference flag declares its default, as v1.0.6 did; applied %q is for new flags", spec.name, spec.applied)
			}
			continue
		}
		if spec.kind == intFlag {
			t.Errorf("%s: an int flag declares at least \"0\" to Rancher (FlagToField: strconv.Itoa); make it a string flag", spec.name)
		}
		field, err := rancher.FieldOf(flags[i])
		if err != nil {
			t.Fatal(err)
		}
		if field.Default != "" && field.Default != false {
			t.Errorf("%s: Rancher's HarvesterConfig CRD would default field %s to %#v; declare nothing and apply the default in the driver", spec.name, field.Name, field.Default)
		}
		if spec.applied != "" && !strings.Contains(spec.usage, "Default: "+spec.applied+".") {
			t.Errorf("%s: the usage must say \"Default: %s.\" (Rancher shows no default for it)", spec.name, spec.applied)
		}
	}
}

// A flag left empty is parsed as if it held the default the driver applies.
func TestAppliedDefaults(t *testing.T) {
	n := 0
	for _, spec := range flagTable {
		if spec.applied == "" {
			continue
		}
		n++
		o := DefaultOptions()
		o[FlagImageName], o[FlagDiskSize], o[FlagNetworkName] = "default/ubuntu", 40, "default/vlan1"
		o[spec.name] = ""
		empty, err := ParseConfig("m1", o)
		if err != nil {
			t.Fatalf("%s empty: %v", spec.name, err)
		}
		o[spec.name] = spec.applied
		set, err := ParseConfig("m1", o)
		if err != nil {
			t.Fatalf("%s=%s: %v", spec.name, spec.applied, err)
		}
		if !reflect.DeepEqual(empty, set) {
			t.Errorf("%s: empty gives\n%+v\nbut %q gives\n%+v", spec.name, empty, spec.applied, set)
		}
	}
	if n != 4 {
		t.Errorf("%d flags have a default the driver applies, want 4 (create timeout, distribution, eviction strategy, OS)", n)
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
	// The flag declares "" (see TestNewFlagsDeclareNoValue): rancher-machine writes a Linux cloud-config for any
	// value without "windows" (commands/create.go, writeCloudConfig), and the driver reads "" as linux.
	for _, f := range CreateFlags() {
		if f.String() != FlagOS {
			continue
		}
		if def, ok := f.Default().(string); !ok || strings.Contains(def, "windows") {
			t.Errorf("%s defaults to %#v, want a string without windows (rancher-machine's cloud-config for a Linux guest)", FlagOS, f.Default())
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
	// rancher-machine takes only the first of them (libmachine/drivers DriverUserdataFlag); the others are
	// ordinary flags to it, so each must come after harvester-cloud-config.
	want := []string{FlagCloudConfig, FlagUserData, FlagUserDataSecret}
	if strings.Join(matching, ",") != strings.Join(want, ",") {
		t.Errorf("flags whose names rancher-machine reads as user data: %v, want exactly %v in that order", matching, want)
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
