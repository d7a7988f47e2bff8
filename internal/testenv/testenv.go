// Package testenv decides what a test does when a tool it needs (cloud-init, the kubevirt and harvester admission
// tools, the control-plane binaries, rancher-machine, the guest image) cannot be had: `make test` and CI set RequireToolsEnv=1 and such a test
// fails; anywhere else it is skipped with the reason. It is linked into tests only.
package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// RequireToolsEnv, set to 1 (as `make test` does), turns a tool that cannot be had into a test failure.
const RequireToolsEnv = "DMDH_REQUIRE_TOOLS"

// ToolsRequired reports whether RequireToolsEnv is 1.
func ToolsRequired() bool { return os.Getenv(RequireToolsEnv) == "1" }

// Unavailable ends t because tool cannot be had (why says why and how to get it): it fails t when tools are
// required, and skips it otherwise.
func Unavailable(t testing.TB, tool string, why error) {
	t.Helper()
	if ToolsRequired() {
		t.Fatalf("%s: %v", tool, why)
	}
	t.Skipf("%s unavailable (set %s=1 to fail instead): %v", tool, RequireToolsEnv, why)
}

// CloudInit returns the path of the real cloud-init (Debian's 22.4 package in CI), which the cloudinit tests
// run their output through; without it the test is Unavailable.
func CloudInit(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("cloud-init")
	if err != nil {
		Unavailable(t, "cloud-init", errors.New("not installed: run cloudinit/testdata/install-cloud-init.sh "+
			"(apt-get install -y --no-install-recommends cloud-init)"))
	}
	return path
}

// Tool returns the directory holding the tool hack/tools.sh builds under name (the kubevirt and harvester
// admission tools): $DMDH_<NAME>_BIN when set, else the tool cache's, when the tool is built. A test never builds
// one: a first build takes minutes, longer than go test's default 10-minute limit on a loaded machine. Without
// the tool the test is Unavailable, named with the command that builds it; `make deps` (and, for the kubevirt
// and harvester tools, `make admission-tools`) builds it before the tests.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("DMDH_" + strings.ToUpper(name) + "_BIN"); dir != "" {
		return dir
	}
	root, err := RepoRoot()
	if err != nil {
		Unavailable(t, name+" tool", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "tools.sh"), "--if-built", name)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		why := strings.TrimSpace(stderr.String()) // "tools.sh: <name> is not built (run hack/tools.sh <name>; …)"
		if why == "" {
			why = "hack/tools.sh --if-built " + name + ": " + err.Error()
		}
		Unavailable(t, name+" tool", fmt.Errorf("%s; make admission-tools or make deps builds it before the tests", why))
	}
	return strings.TrimSpace(stdout.String())
}

// RepoRoot returns the repository root: the nearest directory, upwards from the working directory (or, failing
// that, from this source file), that holds both go.mod and hack/tools.sh. Nested modules such as hack/tools/*
// have a go.mod but no hack/, so they are passed over. The e2e test bed finds the checkout with it too
// (e2e/internal/repo).
func RepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "hack", "tools.sh")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("no directory with go.mod and hack/tools.sh above %q: run from inside the checkout", starts)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}
