// Package scenarios drives the built plugin with the real rancher-machine CLI against the simulated Harvester
// (package testbed): the flows Rancher and docker-machine users run, asserted on the API objects afterwards.
package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
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
	dir, err := os.MkdirTemp("", "dmdh-scenarios-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	testbed.Main(m, testbed.Options{})
	os.RemoveAll(dir)
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
	dir, err := repo.ToolDir(ctx, "rancher-machine", "DMDH_RANCHER_MACHINE_BIN")
	if err != nil {
		return err
	}
	rancherMachine = filepath.Join(dir, "rancher-machine")
	return nil
}

// machineCLI runs rancher-machine with one storage path (its machine store) and one environment.
type machineCLI struct {
	t     *testing.T
	store string
	env   map[string]string
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
	return &machineCLI{t: t, store: t.TempDir(), env: map[string]string{
		"HARVESTER_KUBECONFIG_CONTENT": base64.StdEncoding.EncodeToString(kubeconfig),
	}}
}

// result is one rancher-machine run.
type result struct {
	args   []string
	output string // stdout and stderr, interleaved as the user sees them
	stdout string // stdout alone: what `ip` and `status` print (the plugin's debug lines go to stderr)
	err    error
}

func (r result) String() string {
	return fmt.Sprintf("rancher-machine %s: %v\n%s", strings.Join(r.args, " "), r.err, r.output)
}

// run runs `rancher-machine --storage-path <store> args…` with the plugin first on $PATH.
func (m *machineCLI) run(args ...string) result {
	m.t.Helper()
	return m.runUntil("", args...)
}

// runUntil is run, but when marker is not empty it stops rancher-machine (and its plugin) as soon as a line of
// its output contains marker. `start` and `restart` end with rancher-machine's own Docker check over SSH,
// which cannot reach the stand-in's made-up addresses and would retry for many minutes; the driver's part is
// done when the driver logs its milestone.
func (m *machineCLI) runUntil(marker string, args ...string) result {
	m.t.Helper()
	full := append([]string{"--storage-path", m.store, "--native-ssh"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rancherMachine, full...)
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range m.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group, so that stopping it stops the plugin it started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, stdout syncBuffer
	found := make(chan struct{})
	var once sync.Once
	watch := func(w *syncBuffer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			out.Write(p)
			w.Write(p)
			if marker != "" && strings.Contains(out.String(), marker) {
				once.Do(func() { close(found) })
			}
			return len(p), nil
		})
	}
	cmd.Stdout, cmd.Stderr = watch(&stdout), watch(&syncBuffer{})
	if err := cmd.Start(); err != nil {
		return result{args: full, err: err}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-found:
		cancel() // kills the process group
		<-waited
	}
	return result{args: full, output: out.String(), stdout: stdout.String(), err: err}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// syncBuffer is a bytes.Buffer safe for rancher-machine's stdout and stderr copiers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// must runs rancher-machine and fails the test when it fails.
func (m *machineCLI) must(args ...string) result {
	m.t.Helper()
	r := m.run(args...)
	if r.err != nil {
		m.t.Fatalf("%s", r)
	}
	return r
}

// createArgs are what Rancher's provisioning job passes for a small machine in namespace ns: its install script
// with --custom-install-script, so rancher-machine leaves the guest to cloud-init and does not provision it over
// SSH (the stand-in's guests have made-up addresses; real guests are issue 8's), and the machine config's flags.
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
