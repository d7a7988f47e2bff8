package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/nodedriver"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

func flagsOf(t *testing.T, args ...string) flagsDoc {
	t.Helper()
	stdout, stderr, code := runVerb(t, noEnv, "flags", args...)
	if code != 0 || stderr != "" {
		t.Fatalf("flags %v: exit %d, stderr %q", args, code, stderr)
	}
	var doc flagsDoc
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("flags %v printed no flag table: %v\n%s", args, err, stdout)
	}
	return doc
}

func TestFlagsVerbUnderTheSecondName(t *testing.T) {
	doc := flagsOf(t, "--json", "--driver", "hcivm")
	if doc.Driver != "hcivm" || len(doc.Flags) != len(config.CreateFlags()) {
		t.Fatalf("driver %q with %d flags, want hcivm with %d", doc.Driver, len(doc.Flags), len(config.CreateFlags()))
	}
	byField := map[string]flagEntry{}
	for i, e := range doc.Flags {
		canonical := config.CreateFlags()[i].String()
		if e.Flag != "hcivm-"+strings.TrimPrefix(canonical, "harvester-") || !strings.HasPrefix(e.Env, "HCIVM_") {
			t.Errorf("%s: flag %q, env %q", canonical, e.Flag, e.Env)
		}
		// The field comes back as the flag under both of Rancher's rules: a form that writes it reaches the driver.
		for _, r := range rancher.Rules {
			if got := r.Flag("hcivm", e.Field); got != "--"+e.Flag {
				t.Errorf("%s: field %s becomes %s under %s", e.Flag, e.Field, got, r.Name)
			}
		}
		if strings.Contains(e.Usage, "--harvester-") || strings.Contains(e.Usage, "HARVESTER_") {
			t.Errorf("%s: the usage names the canonical flags: %s", e.Flag, e.Usage)
		}
		byField[e.Field] = e
	}
	for field, want := range map[string][2]string{
		"cpuCount": {"2", "2"}, "createTimeout": {"", "900"}, "cloudProviderDistribution": {"", "rke2"},
		"evictionStrategy": {"", "LiveMigrateIfPossible"}, "os": {"", "linux"}, "diskBus": {"", "virtio"},
		"vmNamespace": {"default", "default"}, "maintenanceStrategy": {"", ""}, "enableTpm": {"false", "false"},
		"reservedMemorySize": {"-1", "-1"},
	} {
		if e := byField[field]; e.Declared != want[0] || e.Applied != want[1] {
			t.Errorf("%s: declared %q applied %q, want %q and %q", field, e.Declared, e.Applied, want[0], want[1])
		}
	}
	for _, f := range nodedriver.CredentialFields {
		if e := byField[f]; !e.Credential || e.RancherType != "password" {
			t.Errorf("%s: credential %v, Rancher type %q", f, e.Credential, e.RancherType)
		}
	}
	// Public credential fields: Rancher's API returns them (not of type password).
	for _, f := range nodedriver.PublicCredentialFields {
		if e := byField[f]; !e.Credential || e.RancherType == "password" {
			t.Errorf("%s: credential %v, Rancher type %q", f, e.Credential, e.RancherType)
		}
	}
	for f, e := range byField {
		if e.Credential != (slices.Contains(nodedriver.CredentialFields, f) || slices.Contains(nodedriver.PublicCredentialFields, f)) {
			t.Errorf("%s: credential %v, but the NodeDriver's credential fields are %v and %v", f, e.Credential, nodedriver.CredentialFields, nodedriver.PublicCredentialFields)
		}
	}
	if e := byField["sshUser"]; e.Credential || e.Kind != "string" || e.Group != "access" {
		t.Errorf("sshUser: %+v", e)
	}
}

// The canonical driver is what a binary under any other name prints (the test binary's name is one).
func TestFlagsVerbCanonicalByDefault(t *testing.T) {
	doc := flagsOf(t)
	if doc.Driver != "harvester" || doc.Flags[0].Flag != config.FlagKubeconfigContent || doc.Flags[0].Env != "HARVESTER_KUBECONFIG_CONTENT" {
		t.Fatalf("driver %q, first flag %+v", doc.Driver, doc.Flags[0])
	}
}

func TestFlagsVerbGroupsEveryFlag(t *testing.T) {
	for _, f := range config.CreateFlags() {
		if flagGroups[f.String()] == "" {
			t.Errorf("%s has no group: add it to flagGroups", f)
		}
	}
	if len(flagGroups) != len(config.CreateFlags()) {
		t.Errorf("flagGroups has %d entries for %d flags", len(flagGroups), len(config.CreateFlags()))
	}
}

// An applied default the flags verb reports is the driver's: the config parsed with the field empty equals the
// config parsed with the field set to it.
func TestFlagsVerbAppliedDefaultsAreTheDriversOwn(t *testing.T) {
	base := func() config.Options {
		o := config.DefaultOptions()
		o[config.FlagImageName], o[config.FlagDiskSize], o[config.FlagNetworkName] = "img", 10, "net"
		return o
	}
	want, err := config.ParseConfig("m1", base())
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range flagsOf(t).Flags {
		if e.Applied == e.Declared {
			continue
		}
		o := base()
		o[e.Flag] = e.Applied
		got, err := config.ParseConfig("m1", o)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s=%s is not what the driver applies to an empty value (err %v)", e.Flag, e.Applied, err)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("only %d applied defaults checked", checked)
	}
}

func TestFlagsVerbRefusesAWrongName(t *testing.T) {
	for _, args := range [][]string{{"--driver", "Hci9"}, {"--nope"}, {"extra"}} {
		if _, stderr, code := runVerb(t, noEnv, "flags", args...); code != 2 || !strings.Contains(stderr, "flags:") {
			t.Errorf("flags %v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// The UI extension is built from ui/pkg/hcivm/flags.json: it must be what the verb prints for hcivm.
func TestFlagsVerbOutputIsTheExtensionsTable(t *testing.T) {
	want, _, code := runVerb(t, noEnv, "flags", "--json", "--driver", "hcivm")
	got, err := os.ReadFile("../../ui/pkg/hcivm/flags.json")
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if string(got) != want {
		t.Errorf("ui/pkg/hcivm/flags.json is not the driver's flag table: run make ui-flags")
	}
}

// Rancher copies a flag's usage into its field's description (FlagToField), which its generic form shows. The
// cluster name is added only for the driver named harvester (rancher/rancher
// pkg/controllers/capr/machineprovision/args.go toArgs, v2.12.12 to v2.15.0), so the usage may not say Rancher sets
// it: under both names it says when Rancher does and what to do otherwise.
func TestClusterNameUsageIsTrueUnderEachName(t *testing.T) {
	for _, driver := range []string{"harvester", "hcivm"} {
		var usage string
		for _, e := range flagsOf(t, "--json", "--driver", driver).Flags {
			if e.Field == "clusterName" {
				usage = e.Usage
			}
		}
		if strings.Contains(usage, "Rancher sets it") || !strings.Contains(usage, "Rancher fills it in only for its driver named harvester") ||
			!strings.Contains(usage, "under any other driver name, set it to the cluster's name") {
			t.Errorf("under %s, clusterName's usage: %q", driver, usage)
		}
	}
}
