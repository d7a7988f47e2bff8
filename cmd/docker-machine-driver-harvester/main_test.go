package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/drivers"
	"github.com/rancher/machine/libmachine/drivers/plugin/localbinary"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// pluginBin is the plugin binary built once for these tests, peakRSSBin the meter of its memory (testdata/peakrss).
var pluginBin, peakRSSBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dmdh-plugin-")
	if err != nil {
		panic(err)
	}
	pluginBin = filepath.Join(dir, "docker-machine-driver-harvester")
	peakRSSBin = filepath.Join(dir, "peakrss")
	for bin, pkg := range map[string]string{pluginBin: ".", peakRSSBin: "./testdata/peakrss"} {
		build := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // the shipped binary is static
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			panic("building " + pkg + ": " + err.Error())
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// meteredPlugin is the command that runs the plugin binary with args under peakRSSBin, its address space limited to
// 2 GiB (an input read without bound fails the test instead of filling the machine's memory), and peak reads its
// peak resident memory in bytes once the command has ended (0 when the meter wrote none). The plugin's own
// ru_maxrss would be the test binary's (see testdata/peakrss).
func meteredPlugin(ctx context.Context, tb testing.TB, args ...string) (cmd *exec.Cmd, peak func() int64) {
	out := filepath.Join(tb.TempDir(), "peak-rss")
	cmd = exec.CommandContext(ctx, peakRSSBin, append([]string{out, strconv.Itoa(2 << 20), pluginBin}, args...)...)
	return cmd, func() int64 {
		kib, err := os.ReadFile(out)
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseInt(string(kib), 10, 64)
		return n << 10
	}
}

// runBinary runs the plugin binary by hand, without rancher-machine's token.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	cmd := exec.Command(pluginBin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MACHINE_PLUGIN_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestBareBinaryBehavesLikeRegisterDriver(t *testing.T) {
	// Rancher runs the bare binary as an "is it executable" check.
	stdout, stderr, code := runBinary(t)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "This is a Docker Machine plugin binary") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	stdout, _, code := runBinary(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "docker-machine-driver-harvester dev (commit") {
		t.Fatalf("--version: exit %d, %q", code, stdout)
	}
	if _, stderr, code := runBinary(t, "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: exit %d, %q", code, stderr)
	}
}

func TestRenderRejectsBadFlags(t *testing.T) {
	_, stderr, code := runBinary(t, "render", "--machine-name", "m1", "--harvester-cpu-count", "0", "--harvester-disk-size", "10")
	if code != 1 || !strings.Contains(stderr, "--harvester-cpu-count: must be a positive whole number") || !strings.Contains(stderr, "--harvester-image-name: is required") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// rancherMachineOptions builds what rancher-machine sends SetConfigFromFlags: every flag at its default
// (commands/create.go getDriverOpts), then the values given.
func rancherMachineOptions(flags []mcnflag.Flag, set map[string]any) *rpcdriver.RPCFlags {
	opts := &rpcdriver.RPCFlags{Values: map[string]any{}}
	for _, f := range flags {
		opts.Values[f.String()] = f.Default()
	}
	for k, v := range set {
		opts.Values[k] = v
	}
	return opts
}

// startPlugin launches the built binary the way rancher-machine does: found on $PATH as
// docker-machine-driver-harvester, handshake, heartbeat, SetConfigRaw.
// savedState is the machine state the plugin gives rancher-machine to save, raw and decoded.
func savedState(t *testing.T, d *rpcdriver.RPCClientDriver) ([]byte, map[string]any) {
	t.Helper()
	raw, err := d.GetConfigRaw()
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]any
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	return raw, saved
}

func startPlugin(t *testing.T, machine string) *rpcdriver.RPCClientDriver {
	t.Helper()
	raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: machine, StorePath: t.TempDir()})
	return startPluginWith(t, raw)
}

// startPluginWith is startPlugin for a machine of the saved state raw.
func startPluginWith(t *testing.T, raw []byte) *rpcdriver.RPCClientDriver {
	t.Helper()
	t.Setenv("PATH", filepath.Dir(pluginBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// rancher-machine's launcher sets its plugin token in this process's environment, where every binary the
	// later tests run would inherit it and start as a plugin: it goes with the test.
	t.Setenv(localbinary.PluginEnvKey, "")
	t.Setenv(localbinary.PluginEnvDriverName, "")
	factory := rpcdriver.NewRPCClientDriverFactory()
	t.Cleanup(func() { factory.Close() })
	d, err := factory.NewRPCClientDriver(harvester.DriverName, raw)
	if err != nil {
		t.Fatalf("starting the plugin over RPC: %v", err)
	}
	return d
}

func TestPluginOverRPC(t *testing.T) {
	const password, token, userData = "p@ss: #word", "kubeconfig-token-value", "#cloud-config\nruncmd: [echo secret-user-data]\n"
	kubeconfig := strings.ReplaceAll(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: TOKEN}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, "TOKEN", token)
	// The credential as Rancher passes it: in the environment, which rancher-machine and its plugin inherit and
	// rancher-machine fills the flag's value from. Such a credential is never saved.
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", kubeconfig)
	d := startPlugin(t, "gc8-pool1-q99l7-6ndw9")
	if got := d.DriverName(); got != "harvester" {
		t.Fatalf("DriverName() = %q", got)
	}
	if got := d.GetMachineName(); got != "gc8-pool1-q99l7-6ndw9" {
		t.Fatalf("GetMachineName() = %q", got)
	}
	flags := d.GetCreateFlags()
	if len(flags) < 32 {
		t.Fatalf("%d flags over RPC, want at least the reference driver's 32", len(flags))
	}
	for _, f := range flags {
		switch f.(type) {
		case *mcnflag.StringFlag, *mcnflag.IntFlag, *mcnflag.BoolFlag:
		default:
			t.Fatalf("flag %s arrives as %T; rancher-machine and Rancher handle pointer flag types only", f.String(), f)
		}
	}
	if got := drivers.DriverUserdataFlag(d); got != config.FlagCloudConfig {
		t.Fatalf("rancher-machine's userdata flag is %q", got)
	}

	err := d.SetConfigFromFlags(rancherMachineOptions(flags, map[string]any{
		config.FlagKubeconfigContent: kubeconfig,
		config.FlagClusterName:       "gc8",
		config.FlagVMNamespace:       "team-a",
		config.FlagImageName:         "ubuntu",
		config.FlagDiskSize:          40,
		config.FlagNetworkName:       "vlan1",
		config.FlagSSHPassword:       password,
		config.FlagUserData:          userData,
	}))
	if err != nil {
		t.Fatalf("SetConfigFromFlags over RPC: %v", err)
	}
	raw, saved := savedState(t, d)
	if saved["VMNamespace"] != "team-a" || saved["ClusterName"] != "gc8" || saved["MachineName"] != "gc8-pool1-q99l7-6ndw9" {
		t.Errorf("persisted state lacks what Remove needs: %s", raw)
	}
	for _, secret := range []string{token, "p@ss", "secret-user-data"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("persisted driver state contains %q: %s", secret, raw)
		}
	}
}

func TestPluginReportsAllProblemsOverRPC(t *testing.T) {
	d := startPlugin(t, "m1")
	err := d.SetConfigFromFlags(rancherMachineOptions(d.GetCreateFlags(), map[string]any{
		config.FlagCPUCount: 0, config.FlagSSHPort: 70000, config.FlagEnableSecureBoot: true,
	}))
	if err == nil {
		t.Fatal("invalid flags accepted")
	}
	for _, want := range []string{"--harvester-cpu-count", "--harvester-ssh-port", "--harvester-enable-secure-boot", "--harvester-image-name", "--harvester-network-name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error over RPC does not mention %s: %v", want, err)
		}
	}
}
