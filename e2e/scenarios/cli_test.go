// Package scenarios drives the built plugin with the real rancher-machine CLI against the simulated Harvester
// (package testbed): the flows Rancher and docker-machine users run, asserted on the API objects afterwards.
package scenarios

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"

	// These tests build the plugin with `go build`, which go test's result cache cannot see; importing the
	// driver makes this test binary, and so the cache key, change whenever the driver does.
	_ "github.com/harvester/docker-machine-driver-harvester/harvester"
)

var (
	// binDir holds the plugin binary built for these tests; rancher-machine finds it on $PATH.
	binDir string
	// rancherMachine is the real rancher-machine CLI built by hack/tools.sh.
	rancherMachine string
	setupOnce      sync.Once
	setupErr       error
)

func TestMain(m *testing.M) {
	dir, err := ownedtemp.Dir("dmdh-scenarios-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	testbed.Main(m, testbed.Options{}, func() { os.RemoveAll(dir) })
}

// setup builds the plugin as it ships (static, trimmed) and finds rancher-machine; it runs once, for the first
// test that needs them.
func setup() error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(binDir, "docker-machine-driver-harvester"), "./cmd/docker-machine-driver-harvester")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the plugin: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rancherMachine, err = rmachine.Find(ctx)
	return err
}

// machineCLI runs rancher-machine for one test: its own machine store and environment.
type machineCLI struct {
	t *testing.T
	rmachine.CLI
}

// newCLI returns a CLI for a test, with the Harvester credential in HARVESTER_KUBECONFIG_CONTENT (base64, as
// Rancher's cloud credential passes it).
func newCLI(t *testing.T, kubeconfig []byte) *machineCLI {
	t.Helper()
	testbed.RequireControlPlane(t)
	setupOnce.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("scenario setup: %v", setupErr)
	}
	m := &machineCLI{t: t, CLI: rmachine.CLI{Bin: rancherMachine, Store: t.TempDir(), PluginDir: binDir, NativeSSH: true}}
	m.setCredential(kubeconfig)
	return m
}

func (m *machineCLI) setCredential(kubeconfig []byte) {
	m.Env = []string{"HARVESTER_KUBECONFIG_CONTENT=" + base64.StdEncoding.EncodeToString(kubeconfig)}
}

// run runs rancher-machine to the end.
func (m *machineCLI) run(args ...string) rmachine.Result {
	m.t.Helper()
	return m.runUntil("", args...)
}

// runUntil is run, but when marker is not empty it stops rancher-machine (and its plugin) as soon as a line of
// its output contains marker. `start` and `restart` end with rancher-machine's own Docker check over SSH,
// which cannot reach the stand-in's made-up addresses and would retry for many minutes; the driver's part is
// done when the driver logs its milestone.
func (m *machineCLI) runUntil(marker string, args ...string) rmachine.Result {
	m.t.Helper()
	return m.runUntilWithin(5*time.Minute, marker, args...)
}

// runUntilWithin is runUntil with a time limit other than 5 minutes.
func (m *machineCLI) runUntilWithin(limit time.Duration, marker string, args ...string) rmachine.Result {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var until func(string, time.Time) bool
	if marker != "" {
		until = func(line string, _ time.Time) bool { return strings.Contains(line, marker) }
	}
	return m.Run(ctx, until, args...)
}

// runWithin runs rancher-machine to the end, within limit.
func (m *machineCLI) runWithin(limit time.Duration, args ...string) rmachine.Result {
	m.t.Helper()
	return m.runUntilWithin(limit, "", args...)
}

// must runs rancher-machine and fails the test when it fails.
func (m *machineCLI) must(args ...string) rmachine.Result {
	m.t.Helper()
	r := m.run(args...)
	if r.Err != nil {
		m.t.Fatalf("%s", r)
	}
	return r
}

// quiet fails the test when rancher-machine warned that it looked for a driver option that does not exist, or of
// a value of the wrong type: with --custom-install-script it reads the driver's OS flag (a name ending in "-os")
// on every create. It returns r.
func quiet(t *testing.T, r rmachine.Result) rmachine.Result {
	t.Helper()
	for _, noise := range []string{"does not exist", "Type assertion", "UNEXPECTED BEHAVIOR"} {
		if strings.Contains(r.Output, noise) {
			t.Errorf("rancher-machine printed %q: %s", noise, r)
		}
	}
	return r
}

// createArgs are what Rancher's provisioning job passes for a small machine in namespace ns: its install script
// with --custom-install-script, so rancher-machine leaves the guest to cloud-init and does not provision it over
// SSH (simulated guests have made-up addresses; real guests are reached through a forwarded port), and the
// machine config's flags.
func createArgs(t *testing.T, ns string, extra ...string) []string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "install.sh")
	if err := os.WriteFile(script, []byte(installScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return append([]string{"create", "-d", "harvester", "--custom-install-script", script,
		"--harvester-vm-namespace", ns,
		"--harvester-image-name", "default/ubuntu-22.04",
		"--harvester-disk-size", "10",
		"--harvester-network-name", "default/vm-untag",
		"--harvester-cpu-count", "2",
		"--harvester-memory-size", "4",
		"--harvester-create-timeout", "120",
	}, extra...)
}
