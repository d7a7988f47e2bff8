package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// A user upgrading from the reference driver: a machine it created with --harvester-kubeconfig-content has the
// credential in its saved state (the reference driver's JSON, harvester/testdata/state/reference-driver.json). With
// this driver in its place and no credential anywhere else, every command works, the state keeps the credential
// through them, and rm removes everything.
func TestUpgradeFromTheReferenceDriverKeepsMachinesManageable(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	const name = "m1"
	cli.must(append(createArgs(t, ns), name)...)

	// The machine as the reference driver saved it: rancher-machine's host record with the reference driver's
	// Driver section, the kubeconfig decoded (it decoded base64 before saving).
	saved := referenceDriverState(t, cli.Store, name, ns, string(b.AdminKubeconfig()))
	cli.Env = noCredential(t) // no credential but the saved one

	if out := cli.must("status", name).Answer(); out != "Running" {
		t.Errorf("status: %q", out)
	}
	if got := savedCredential(t, cli.Store, name); got != saved {
		t.Fatalf("status saved the machine without the reference driver's credential (%d bytes kept, want %d)", len(got), len(saved))
	}
	ipv4, _ := standin.Addresses(ns, name, 0)
	if out := cli.must("ip", name).Answer(); out != ipv4 {
		t.Errorf("ip: %q, want %s", out, ipv4)
	}
	cli.must("stop", name)
	vmiGone(t, b, ns, name)
	running := "VM " + ns + "/" + name + " is running at"
	if r := cli.runUntil(running, "start", name); !strings.Contains(r.Output, running) {
		t.Fatalf("start: %s", r)
	}
	vmiRunning(t, b, ns, name)
	if got := savedCredential(t, cli.Store, name); got != saved {
		t.Fatalf("the credential was dropped from the saved state after stop and start")
	}
	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
}

// referenceDriverState replaces the Driver section of machine name's saved host record with the reference
// driver's, carrying kubeconfig, and returns the credential as saved.
func referenceDriverState(t *testing.T, store, name, ns, kubeconfig string) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join(root, "harvester", "testdata", "state", "reference-driver.json"))
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(kubeconfig)
	driver := strings.NewReplacer("@MACHINE@", name, "@STORE@", store, "@NAMESPACE@", ns, "@CLUSTER@", "",
		"@KUBECONFIG@", string(quoted)).Replace(string(fixture))
	path := filepath.Join(store, "machines", name, "config.json")
	var host map[string]json.RawMessage
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &host)
	}
	if err != nil {
		t.Fatalf("the machine's saved host record: %v", err)
	}
	if string(host["DriverName"]) != `"harvester"` {
		t.Fatalf("DriverName %s", host["DriverName"])
	}
	host["Driver"] = json.RawMessage(driver)
	out, err := json.MarshalIndent(host, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// savedCredential is the reference driver's credential in machine name's saved state, "" when there is none.
func savedCredential(t *testing.T, store, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(store, "machines", name, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var host struct {
		Driver struct{ KubeConfigContent string }
	}
	if err := json.Unmarshal(raw, &host); err != nil {
		t.Fatal(err)
	}
	return host.Driver.KubeConfigContent
}

// A credential whose token expires within 30 days: create says so, as a milestone, with the date and how to renew.
func TestCreateWarnsOfAnExpiringCredential(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	issued, err := b.Credential(ctx, credential.Spec{Namespace: ns, Name: "rancher", ClusterRoles: []string{"cluster-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	expiring, err := issued.Expiring(ctx, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cli := newCLI(t, expiring.Kubeconfig)
	r := cli.must(append(createArgs(t, ns), "m1")...)
	want := time.Now().Add(7 * 24 * time.Hour).UTC().Format("2006-01-02T")
	if !strings.Contains(r.Output, "The Harvester credential expires at "+want) || !strings.Contains(r.Output, "update the Harvester cloud credential") {
		t.Errorf("create did not warn of the credential expiring on %s:\n%s", want, r.Output)
	}
	if _, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	cli.must("rm", "-y", "m1")
	nothingLeft(t, b, ns)
}
