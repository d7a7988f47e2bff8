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
// the tool the test is Unavailable, named with the command that builds it; `make quick` and `make deps` run it
// before the tests.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("DMDH_" + strings.ToUpper(name) + "_BIN"); dir != "" {
		return dir
	}
	root, err := repoRoot()
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
		Unavailable(t, name+" tool", fmt.Errorf("%s; make quick and make deps build it before the tests", why))
	}
	return strings.TrimSpace(stdout.String())
}

// repoRoot is the checkout the test runs in: the nearest directory above the working directory (the package's,
// under go test) that holds hack/tools.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no hack/tools.sh above the working directory")
		}
		dir = parent
	}
}
