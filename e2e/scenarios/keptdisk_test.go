package scenarios

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// A data disk with "autoDelete": false (Terraform's auto_delete = false) outlives its machine: after rm its PVC is
// there and nothing else of the machine is (VM, VMI, cloud-init Secret, the root disk's PVC), rm's output names the
// kept claim with the command that deletes it, and that command, as docs/vm-options.md gives it, deletes it.
func TestKeptDiskOutlivesTheMachine(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	cli := newCLI(t, b.AdminKubeconfig())
	disks := `{"disks":[{"imageName":"default/ubuntu-22.04","size":10,"bootOrder":1},` +
		`{"storageClassName":"longhorn","size":5,"autoDelete":false}]}`
	cli.must(append(createArgs(t, ns, "--harvester-disk-info", disks), "m1")...)

	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keptVolumes := strings.Split(vm.Annotations["node-driver.harvesterhci.io/kept-volumes"], ",")
	var kept, removed []string
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if slices.Contains(keptVolumes, v.Name) {
			kept = append(kept, v.PersistentVolumeClaim.ClaimName)
		} else {
			removed = append(removed, v.PersistentVolumeClaim.ClaimName)
		}
	}
	if len(kept) != 1 || len(removed) != 1 {
		t.Fatalf("VM m1 has kept claims %v and others %v; want one of each (annotation %q)", kept, removed, keptVolumes)
	}
	claim := kept[0]
	// The claims exist before rm (Harvester's VM controller, here the stand-in, makes them from the VM).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		list, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the machine's two claims were not made: %v", err)
		}
	}

	r := cli.must("rm", "-y", "m1")
	t.Logf("rm said:\n%s", r.Output)
	want := "kubectl -n " + ns + " delete pvc " + claim
	if !strings.Contains(r.Output, "Keeping volume "+claim) || !strings.Contains(r.Output, want) {
		t.Errorf("rm does not name the kept claim %s with %q:\n%s", claim, want, r.Output)
	}
	var left []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if left, err = b.Leftovers(ctx, ns, 0); err != nil {
			t.Fatal(err)
		}
		if len(left) <= 1 || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(left, []string{"PVC " + claim}) {
		t.Fatalf("after rm, left in namespace %s: %v; want only PVC %s", ns, left, claim)
	}
	// Still there a moment later: nothing deletes it behind rm's back (Harvester's VM finalizer has run).
	time.Sleep(2 * time.Second)
	if _, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{}); err != nil {
		t.Fatalf("the kept claim went: %v", err)
	}

	// The guide's command deletes it: kubectl when this machine has it (make deps does not build it), else the
	// same request (a DELETE of the claim) through the API.
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
		if err := os.WriteFile(kubeconfig, b.AdminKubeconfig(), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--kubeconfig", kubeconfig}, strings.Fields(strings.TrimPrefix(want, "kubectl "))...)
		if out, err := exec.Command(kubectl, args...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	} else if err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, b, ns)
}
