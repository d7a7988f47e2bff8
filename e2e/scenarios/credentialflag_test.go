package scenarios

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The docker-machine CLI flow: the credential given as the create flag, nothing in the environment. rancher-machine's
// later commands take no driver flags, so the machine keeps the credential in its store (config.json, mode 0600)
// and status, ip, stop, start, restart, kill and rm work with no credential anywhere else; rm leaves nothing in
// Harvester and takes the saved credential with the machine's store.
func TestCredentialFlagKeepsTheMachineManageable(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	cli.Env = noCredential(t)
	const name = "cli1"
	given := base64.StdEncoding.EncodeToString(b.AdminKubeconfig())
	quiet(t, cli.must(append(createArgs(t, ns, "--harvester-kubeconfig-content", given), name)...))

	config := filepath.Join(cli.Store, "machines", name, "config.json")
	checkSaved := func(after string) {
		t.Helper()
		if got := savedCredential(t, cli.Store, name); got != string(b.AdminKubeconfig()) {
			t.Fatalf("after %s the machine's store does not hold the credential given at create (%d bytes saved)", after, len(got))
		}
		fi, err := os.Stat(config)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("after %s %s holds the credential with mode %#o, want 0600", after, config, mode)
		}
		if held := storeFilesHolding(t, cli.Store, name, b.AdminConfig().BearerToken); len(held) != 1 || held[0] != config {
			t.Errorf("after %s the credential's token is in %v, want only in %s", after, held, config)
		}
	}
	checkSaved("create")

	if out := cli.must("status", name).Answer(); out != "Running" {
		t.Errorf("status: %q", out)
	}
	ipv4, _ := standin.Addresses(ns, name, 0)
	if out := cli.must("ip", name).Answer(); out != ipv4 {
		t.Errorf("ip: %q, want %s", out, ipv4)
	}
	cli.must("stop", name)
	vmiGone(t, b, ns, name)
	startAndRestart(t, b, cli, ns, name)
	cli.must("kill", name)
	vmiGone(t, b, ns, name)
	checkSaved("stop, start, restart and kill")

	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
	if _, err := os.Stat(filepath.Dir(config)); !os.IsNotExist(err) {
		t.Errorf("rm left the machine, and the credential saved with it, in the store: %v", err)
	}
}

// noCredential is an environment with no Harvester credential: no $HARVESTER_KUBECONFIG_CONTENT and a $KUBECONFIG
// that does not exist.
func noCredential(t *testing.T) []string {
	t.Helper()
	if _, ok := os.LookupEnv("HARVESTER_KUBECONFIG_CONTENT"); ok {
		t.Fatal("this test process has $HARVESTER_KUBECONFIG_CONTENT set, which rancher-machine would inherit")
	}
	return []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "absent")}
}

// storeFilesHolding lists the files of machine name's store directory whose content contains any of secrets.
func storeFilesHolding(t *testing.T, store, name string, secrets ...string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(filepath.Join(store, "machines", name), func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if strings.Contains(string(data), s) {
				found = append(found, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
