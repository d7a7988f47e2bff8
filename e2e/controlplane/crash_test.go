package controlplane

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
)

// crashEnv, when set, makes TestKilledTestLeavesNothing act as the child that starts a control plane and dies.
const crashEnv = "DMDH_E2E_CRASH_REPORT"

const prSetChildSubreaper = 36 // <linux/prctl.h>

type crashReport struct {
	Dir  string
	Pids []int
}

// A test binary killed outright (SIGKILL: a `go test` timeout, an interrupted run, an OOM kill) runs no cleanup
// at all. Its servers must still go (Pdeathsig), and the next Start must remove its directory.
func TestKilledTestLeavesNothing(t *testing.T) {
	if report := os.Getenv(crashEnv); report != "" {
		crashChild(t, report)
		return
	}
	if testing.Short() {
		t.Skip("starts a real control plane")
	}
	// Become the subreaper of orphaned descendants, so the child's servers are reparented here and can be
	// waited for (and reaped) instead of polled.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledTestLeavesNothing$")
	cmd.Env = append(os.Environ(), crashEnv+"="+report)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL (err %v), output:\n%s", err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("child wrote no report: %v\n%s", err, out)
	}
	var r crashReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Pids) != 3 {
		t.Fatalf("report lists %d server pids, want 3: %+v", len(r.Pids), r)
	}
	// The servers were orphaned to this process (a subreaper, see above): wait4 blocks until each has died.
	for _, pid := range r.Pids {
		exited := make(chan error, 1)
		go func() {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			exited <- err
		}()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("wait for server pid %d: %v", pid, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("server pid %d still running 10 s after its test binary was killed", pid)
		}
	}
	if _, err := os.Stat(r.Dir); err != nil {
		t.Fatalf("the killed child's directory should still be there before the sweep: %v", err)
	}
	ownedtemp.Sweep(dirPrefix)
	if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
		t.Errorf("sweep left %s behind (stat: %v)", r.Dir, err)
	}
}

func crashChild(t *testing.T, report string) {
	cp, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := crashReport{Dir: cp.Dir()}
	for _, p := range []*process{cp.etcd, cp.apiserver, cp.kcm} {
		r.Pids = append(r.Pids, p.Pid())
	}
	data, _ := json.Marshal(r)
	if err := os.WriteFile(report, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // not reached
}
