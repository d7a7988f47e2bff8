package scenarios

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// machineObjects is what machine name has in namespace ns: its VM's UID, its Secret's UID, resourceVersion and
// user data, and its volumes' UIDs ("" when absent).
type machineObjects struct {
	vm, secret, secretVersion, userData string
	claims                              []string
}

func objectsOf(t *testing.T, b *testbed.Bed, ns, name string) machineObjects {
	t.Helper()
	ctx := context.Background()
	var o machineObjects
	if vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && vm.DeletionTimestamp == nil {
		o.vm = string(vm.UID)
	}
	if s, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-cloudinit", metav1.GetOptions{}); err == nil {
		o.secret, o.secretVersion, o.userData = string(s.UID), s.ResourceVersion, string(s.Data["userdata"])
		if len(s.OwnerReferences) != 1 || string(s.OwnerReferences[0].UID) != o.vm {
			t.Errorf("Secret %s/%s-cloudinit is owned by %+v, not by VM uid %s", ns, name, s.OwnerReferences, o.vm)
		}
	}
	pvcs, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pvcs.Items {
		if p.DeletionTimestamp == nil {
			o.claims = append(o.claims, p.Name+"@"+string(p.UID))
		}
	}
	sort.Strings(o.claims)
	return o
}

func (o machineObjects) same(p machineObjects) bool {
	return o.vm == p.vm && o.secret == p.secret && o.secretVersion == p.secretVersion && o.userData == p.userData &&
		strings.Join(o.claims, ",") == strings.Join(p.claims, ",")
}

// A store entry that outlived its VM (kept aside, its machine removed, the name created again by another
// store) names a VM that is not its own: stop refuses it, and rm drops the entry without touching the VM, its
// Secret or its volumes, and says why.
func TestStaleEntryLeavesALaterVMOfItsName(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	first, later := newCLI(t, b.AdminKubeconfig()), newCLI(t, b.AdminKubeconfig())
	args := createArgs(t, ns)
	first.must(append(args, "m1")...)
	entry := filepath.Join(first.Store, "machines", "m1")
	kept := filepath.Join(t.TempDir(), "m1")
	if err := os.CopyFS(kept, os.DirFS(entry)); err != nil {
		t.Fatal(err)
	}
	first.must("rm", "-y", "m1")
	nothingLeft(t, b, ns)

	later.must(append(args, "m1")...)
	if err := os.CopyFS(entry, os.DirFS(kept)); err != nil { // the stale entry is back
		t.Fatal(err)
	}
	before := objectsOf(t, b, ns, "m1")
	if before.vm == "" || before.secret == "" || len(before.claims) == 0 {
		t.Fatalf("the later machine is incomplete: %+v", before)
	}

	stop := first.run("stop", "m1")
	if stop.Err == nil || !strings.Contains(stop.Output, "VM "+ns+"/m1 is not this machine's") || !strings.Contains(stop.Output, before.vm) ||
		!strings.Contains(stop.Output, "rancher-machine rm -f m1") {
		t.Errorf("stop of the stale entry must refuse the later VM and say why: %s", stop)
	}
	rm := first.must("rm", "-y", "m1")
	t.Logf("what the user sees:\n%s", rm.Output)
	for _, want := range []string{"VM " + ns + "/m1 is not this machine's", before.vm, "was left alone"} {
		if !strings.Contains(rm.Output, want) {
			t.Errorf("rm does not say %q:\n%s", want, rm.Output)
		}
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("rm kept the stale entry in the store: %v", err)
	}
	if after := objectsOf(t, b, ns, "m1"); !after.same(before) {
		t.Errorf("the later machine's objects changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if out := later.must("status", "m1").Answer(); out != "Running" {
		t.Errorf("the later machine's status: %q", out)
	}
	later.must("rm", "-y", "m1")
	nothingLeft(t, b, ns)
}

// Two creates of one name from two stores at once, interleaved at the worst moment: the loser passed its
// pre-flight before the winner made anything, and sends its cloud-init Secret while the winner's exists without
// its VM yet. The loser fails without touching the winner's VM, Secret (its user data carries the winner's SSH
// key, not the loser's) or volumes, and the loser's rm leaves them too.
func TestConcurrentCreatesOfOneName(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	post := func(path string) func(*http.Request) bool {
		return func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == path }
	}
	loserGate, winnerGate := make(chan struct{}), make(chan struct{})
	loserConfig, loserHeld := gatedProxy(t, b.AdminConfig(), post("/api/v1/namespaces/"+ns+"/secrets"), loserGate)
	winnerConfig, winnerHeld := gatedProxy(t, b.AdminConfig(), post("/apis/kubevirt.io/v1/namespaces/"+ns+"/virtualmachines"), winnerGate)
	winner, loser := newCLI(t, winnerConfig), newCLI(t, loserConfig)
	args := createArgs(t, ns)
	create := func(cli *machineCLI, held <-chan struct{}) <-chan rmachine.Result {
		done := make(chan rmachine.Result, 1)
		go func() { done <- cli.run(append(append([]string{}, args...), "m1")...) }()
		select {
		case <-held:
		case r := <-done:
			t.Fatalf("the create ended before the moment of the race: %s", r)
		case <-time.After(2 * time.Minute):
			t.Fatal("the create never came to the moment of the race")
		}
		return done
	}
	loserDone := create(loser, loserHeld)    // past its pre-flight, its Secret held
	winnerDone := create(winner, winnerHeld) // its Secret made, its VM held
	close(loserGate)
	lost := <-loserDone
	close(winnerGate)
	if won := <-winnerDone; won.Err != nil {
		t.Fatalf("the first create of the name failed: %s", won)
	}
	t.Logf("what the loser sees:\n%s", lost.Output)
	if lost.Err == nil || !strings.Contains(lost.Output, "cloud-init Secret "+ns+"/m1-cloudinit already exists without a VM: another create of machine m1 is running") {
		t.Errorf("the loser must fail on the winner's Secret and say so: %s", lost)
	}

	objects := objectsOf(t, b, ns, "m1")
	key := func(cli *machineCLI) string {
		k, err := os.ReadFile(filepath.Join(cli.Store, "machines", "m1", "id_rsa.pub"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(k))
	}
	if k := key(winner); k == "" || !strings.Contains(objects.userData, k) {
		t.Errorf("the Secret's user data lacks the winner's SSH key %q", k)
	}
	if k := key(loser); k != "" && strings.Contains(objects.userData, k) {
		t.Errorf("the Secret's user data carries the loser's SSH key")
	}
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if winnerUID := savedVMUID(t, winner); winnerUID != vm.UID {
		t.Errorf("the winner recorded VM uid %q, the VM has %q", winnerUID, vm.UID)
	}

	// rancher-machine keeps the loser's entry when its create got past the pre-flight: its rm leaves the winner's.
	if _, err := os.Stat(filepath.Join(loser.Store, "machines", "m1")); err == nil {
		loser.must("rm", "-y", "m1")
	}
	if after := objectsOf(t, b, ns, "m1"); !after.same(objects) {
		t.Errorf("the winner's objects changed:\nbefore %+v\nafter  %+v", objects, after)
	}
	winner.must("rm", "-y", "m1")
	nothingLeft(t, b, ns)
}

// savedVMUID is the VM UID a machine's saved state records.
func savedVMUID(t *testing.T, cli *machineCLI) types.UID {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(cli.Store, "machines", "m1", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct{ Driver struct{ VMUID types.UID } }
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	return state.Driver.VMUID
}
