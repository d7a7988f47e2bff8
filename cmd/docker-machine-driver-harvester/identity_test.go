package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// startPluginAs launches the built binary installed under a second name, as rancher-machine finds it on $PATH for
// driver name: a link docker-machine-driver-<name> to the same file.
func startPluginAs(t *testing.T, name, machine string) *rpcdriver.RPCClientDriver {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(pluginBin, filepath.Join(dir, identity.BinaryPrefix+name)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: machine, StorePath: t.TempDir()})
	factory := rpcdriver.NewRPCClientDriverFactory()
	t.Cleanup(func() { factory.Close() })
	d, err := factory.NewRPCClientDriver(name, raw)
	if err != nil {
		t.Fatalf("starting the plugin as %s over RPC: %v", name, err)
	}
	return d
}

// Under its own name the plugin declares the flag table exactly as it is.
func TestOwnNameDeclaresTheFlagTableUnchanged(t *testing.T) {
	d := startPlugin(t, "m1")
	if got, want := d.GetCreateFlags(), config.CreateFlags(); !reflect.DeepEqual(got, want) {
		t.Errorf("flags over RPC differ from the flag table:\n got %v\nwant %v", got, want)
	}
}

func TestSecondNameTakesItsIdentityFromTheExecutable(t *testing.T) {
	kubeconfig := strings.ReplaceAll(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: TOKEN}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, "TOKEN", "second-name-token")
	// Rancher's name for the cloud credential's field of driver hcivm (args.go getArgsEnvAndStatus).
	t.Setenv("HCIVM_KUBECONFIG_CONTENT", kubeconfig)
	d := startPluginAs(t, "hcivm", "gc8-pool1-q99l7-6ndw9")
	if got := d.DriverName(); got != "hcivm" {
		t.Fatalf("DriverName() = %q, want hcivm", got)
	}
	flags := d.GetCreateFlags()
	canonical := config.CreateFlags()
	if len(flags) != len(canonical) {
		t.Fatalf("%d flags under the second name, %d under the own name", len(flags), len(canonical))
	}
	for i, f := range flags {
		c := canonical[i]
		suffix := strings.TrimPrefix(c.String(), "harvester-")
		if f.String() != "hcivm-"+suffix {
			t.Errorf("flag %d is %q, want hcivm-%s", i, f.String(), suffix)
		}
		if reflect.TypeOf(f) != reflect.TypeOf(c) || !reflect.DeepEqual(f.Default(), c.Default()) {
			t.Errorf("%s: kind or default changed (%T %v, own name %T %v)", f.String(), f, f.Default(), c, c.Default())
		}
		env, usage := envAndUsage(f)
		if want := "HCIVM_" + strings.ToUpper(strings.ReplaceAll(suffix, "-", "_")); env != want {
			t.Errorf("%s: environment variable %q, want %q", f.String(), env, want)
		}
		if strings.Contains(usage, "--harvester-") {
			t.Errorf("%s: usage names a harvester- flag: %s", f.String(), usage)
		}
	}
	// rancher-machine's user-data and OS flags are found by name parts, which the prefix must not disturb.
	if got := drivers.DriverUserdataFlag(d); got != "hcivm-cloud-config" {
		t.Errorf("rancher-machine's userdata flag is %q", got)
	}
	if got := drivers.DriverOSFlag(d); got != "hcivm-os" {
		t.Errorf("rancher-machine's OS flag is %q", got)
	}

	err := d.SetConfigFromFlags(rancherMachineOptions(flags, map[string]any{
		"hcivm-kubeconfig-content": kubeconfig,
		"hcivm-cluster-name":       "gc8",
		"hcivm-vm-namespace":       "team-a",
		"hcivm-image-name":         "ubuntu",
		"hcivm-disk-size":          40,
		"hcivm-network-name":       "vlan1",
	}))
	if err != nil {
		t.Fatalf("SetConfigFromFlags under the second name: %v", err)
	}
	raw, saved := savedState(t, d)
	if saved["VMNamespace"] != "team-a" || saved["ClusterName"] != "gc8" {
		t.Errorf("the second name's flags did not reach the saved state: %s", raw)
	}
	if strings.Contains(string(raw), "second-name-token") {
		t.Errorf("the credential from $HCIVM_KUBECONFIG_CONTENT was saved: %s", raw)
	}
}

func TestSecondNameErrorsNameItsFlags(t *testing.T) {
	d := startPluginAs(t, "hcivm", "m1")
	err := d.SetConfigFromFlags(rancherMachineOptions(d.GetCreateFlags(), map[string]any{
		"hcivm-cpu-count": 0, "hcivm-enable-secure-boot": true,
	}))
	if err == nil {
		t.Fatal("invalid flags accepted")
	}
	for _, want := range []string{"--hcivm-cpu-count:", "--hcivm-enable-secure-boot: needs --hcivm-enable-efi", "--hcivm-image-name:", "--hcivm-network-name:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--harvester-") {
		t.Errorf("error under the second name names a harvester- flag: %v", err)
	}
}

func envAndUsage(f mcnflag.Flag) (string, string) {
	switch f := f.(type) {
	case *mcnflag.StringFlag:
		return f.EnvVar, f.Usage
	case *mcnflag.IntFlag:
		return f.EnvVar, f.Usage
	case *mcnflag.BoolFlag:
		return f.EnvVar, f.Usage
	case *mcnflag.StringSliceFlag:
		return f.EnvVar, f.Usage
	}
	return "", ""
}
