package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// Under the second name render and check read the --hcivm- flags and $HCIVM_ variables only, and name them.
func TestVerbsUnderTheSecondName(t *testing.T) {
	asDriver(t, "hcivm")
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"HCIVM_DISK_SIZE": "10", "HARVESTER_NETWORK_NAME": "ignored"}[k]
		return v, ok
	}
	stdout, stderr, code := runVerb(t, env, "render", "--machine-name", "m1", "--hcivm-image-name", "img", "--hcivm-network-name", "net")
	if code != 0 || !strings.Contains(stdout, "default/img") || !strings.Contains(stdout, `"storage":"10Gi"`) {
		t.Fatalf("render as hcivm: exit %d, stderr %q", code, stderr)
	}
	// The canonical flags are no flags of this driver.
	if _, stderr, code := runVerb(t, env, "render", "--machine-name", "m1", "--harvester-image-name", "img"); code != 2 ||
		!strings.Contains(stderr, "flag provided but not defined: -harvester-image-name") || !strings.Contains(stderr, "[--hcivm-... flags]") {
		t.Errorf("a canonical flag: exit %d, stderr %q", code, stderr)
	}
	// $HARVESTER_NETWORK_NAME was not read: the network is missing, and the problem names the hcivm flags.
	_, stderr, code = runVerb(t, env, "render", "--machine-name", "m1", "--hcivm-image-name", "img")
	if code != 1 || !strings.Contains(stderr, "--hcivm-network-name") || strings.Contains(stderr, "--harvester-") {
		t.Errorf("render without a network: exit %d, stderr %q", code, stderr)
	}
	badEnv := func(k string) (string, bool) { return "lots", k == "HCIVM_CPU_COUNT" }
	if _, stderr, code := runVerb(t, badEnv, "check", "--machine-name", "m1"); code != 2 || !strings.Contains(stderr, "$HCIVM_CPU_COUNT: must be a whole number") {
		t.Errorf("check with a bad variable: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runVerb(t, noEnv, "check", "--machine-name", "m1", "--hcivm-disk-size", "-1")
	if code != 1 || !strings.Contains(stderr, "--hcivm-disk-size") || strings.Contains(stderr, "--harvester-") {
		t.Errorf("check with a bad flag: exit %d, stderr %q", code, stderr)
	}
}

// The binary installed as docker-machine-driver-hcivm is that driver by hand too.
func TestBinaryUnderTheSecondName(t *testing.T) {
	link := filepath.Join(t.TempDir(), identity.BinaryPrefix+"hcivm")
	if err := os.Symlink(pluginBin, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "render", "--machine-name", "m1", "--hcivm-image-name", "img", "--hcivm-network-name", "net")
	cmd.Env = []string{"HCIVM_DISK_SIZE=12", "HARVESTER_DISK_SIZE=99", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"storage":"12Gi"`) {
		t.Fatalf("render as docker-machine-driver-hcivm: %v\n%s", err, out)
	}
	cmd = exec.Command(link, "check", "--machine-name", "m1", "--hcivm-cpu-count", "x")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	msg, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(msg), "-hcivm-cpu-count") || !strings.Contains(string(msg), "--hcivm-... flags") {
		t.Errorf("check as docker-machine-driver-hcivm: exit %d\n%s", cmd.ProcessState.ExitCode(), msg)
	}
}
