// Package testenv decides what a test does when a tool it needs (cloud-init, the control-plane binaries,
// rancher-machine, the guest image) cannot be had: `make test` and CI set RequireToolsEnv=1 and such a test
// fails; anywhere else it is skipped with the reason. It is linked into tests only.
package testenv

import (
	"errors"
	"os"
	"os/exec"
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
