package controlplane_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
)

// A start-up step that fails is reported with its own error and the servers' log tails, and stops what had
// started. (Start used to panic here: its deferred error handler read the result variable that `return nil, err`
// had just set to nil, and the real error was lost.)
func TestStartReportsAFailedStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real control plane")
	}
	dir := filepath.Join(t.TempDir(), "cp")
	stepErr := errors.New("install the CRDs: no such manifest")
	cp, err := controlplane.Start(context.Background(), controlplane.Options{
		Dir:  dir,
		Logf: t.Logf,
		BeforeControllerManager: func(context.Context, *rest.Config) error {
			return stepErr
		},
	})
	if cp != nil {
		cp.Stop()
		t.Fatal("Start returned a control plane along with an error")
	}
	if !errors.Is(err, stepErr) {
		t.Fatalf("Start error = %v, want it to wrap %q", err, stepErr)
	}
	for _, want := range []string{"etcd.log", "kube-apiserver.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error lacks the tail of %s:\n%v", want, err)
		}
	}
	if left := processesUsing(t, dir); len(left) > 0 {
		t.Errorf("processes still running after the failed start: %v", left)
	}
}

// Binaries that cannot be run give an error naming the server, not a panic, and no temporary directory is left.
func TestStartReportsMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // Start's own directory goes here, away from other packages' control planes
	cp, err := controlplane.Start(context.Background(), controlplane.Options{BinDir: empty})
	if cp != nil || err == nil {
		t.Fatalf("Start with an empty binary directory = %v, %v; want an error", cp, err)
	}
	if !strings.Contains(err.Error(), filepath.Join(empty, "etcd")) {
		t.Errorf("error does not name the etcd binary it tried: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "dmdh-controlplane-*")); len(left) > 0 {
		t.Errorf("Start left its directory behind: %v", left)
	}
}

// processesUsing lists the command lines of live processes that mention dir.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended meanwhile
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) {
			out = append(out, cmd)
		}
	}
	return out
}
