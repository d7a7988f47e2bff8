package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// machineObjects is what a machine of name m1 has in Harvester: its VM and cloud-init Secret (nil when absent).
func (fc *fakeCluster) machineObjects(name string) (*kubevirtv1.VirtualMachine, *corev1.Secret) {
	ctx := context.Background()
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		vm = nil
	}
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", objects.CloudInitSecretName(name))
	if err != nil {
		secret = nil
	}
	return vm, secret
}

// equalSecrets reports whether a Secret is unchanged: the same object with the same metadata and data (the fake
// keeps no resourceVersion).
func equalSecrets(a, b *corev1.Secret) bool {
	return a.UID == b.UID && reflect.DeepEqual(a.ObjectMeta, b.ObjectMeta) && reflect.DeepEqual(a.Data, b.Data)
}

// staleAndLater makes machine m1, keeps its saved state, removes it and makes m1 again as another machine:
// the kept state is a store entry that outlived its VM.
func staleAndLater(t *testing.T, fc *fakeCluster, opts config.Options) (stale, later *Driver) {
	t.Helper()
	first := newTestDriver(t, fc, "m1", opts)
	if err := first.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := first.Create(); err != nil {
		t.Fatal(err)
	}
	stale = savedAndLoaded(t, fc, first)
	if err := savedAndLoaded(t, fc, first).Remove(); err != nil {
		t.Fatal(err)
	}
	later = newTestDriver(t, fc, "m1", opts)
	if err := later.Create(); err != nil {
		t.Fatal(err)
	}
	return stale, later
}

// Create records the VM's UID and its create id in the state rancher-machine saves; the VM and the Secret carry
// the create id.
func TestCreateRecordsWhatItMade(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	preCreate := savedAndLoaded(t, fc, d) // what rancher-machine saves between PreCreateCheck and Create
	if preCreate.CreateID == "" || preCreate.VMUID != "" {
		t.Fatalf("state saved before Create: create id %q, VM uid %q; want a create id and no UID", preCreate.CreateID, preCreate.VMUID)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	vm, secret := fc.machineObjects("m1")
	saved := savedAndLoaded(t, fc, d)
	if saved.VMUID != string(vm.UID) || saved.CreateID != preCreate.CreateID {
		t.Errorf("saved state: VM uid %q create id %q; want %q and %q", saved.VMUID, saved.CreateID, vm.UID, preCreate.CreateID)
	}
	if vm.Annotations[config.AnnotationCreateID] != d.CreateID || secret.Annotations[config.AnnotationCreateID] != d.CreateID {
		t.Errorf("create id on the VM %q, on the Secret %q; want %q", vm.Annotations[config.AnnotationCreateID], secret.Annotations[config.AnnotationCreateID], d.CreateID)
	}

	// A state saved before these fields existed loads, and saves without them.
	old := NewDriver("", "")
	if err := json.Unmarshal([]byte(`{"MachineName":"m1","VMNamespace":"default","DriverVersion":"v1.0.0"}`), old); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(old)
	if !old.legacyOwnership() || strings.Contains(string(raw), "VMUID") || strings.Contains(string(raw), "CreateID") {
		t.Errorf("an old state: legacy %v, saved as %s", old.legacyOwnership(), raw)
	}
}

// rm of a store entry that outlived its VM leaves the later VM of the same name, its Secret and its address, and
// succeeds so rancher-machine drops the entry; it says why at Info.
func TestRemoveOfAStaleEntryLeavesALaterVM(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stale func(*Driver)
	}{
		{"entry saved after Create (VM uid)", func(*Driver) {}},
		// The state saved before a Create that failed: the create id only.
		{"entry of a failed create (create id)", func(d *Driver) { d.VMUID = "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(fc.staticGuest())
			logs := kubefake.CaptureLog(t)
			stale, later := staleAndLater(t, fc, poolCreateOptions("10.0.0.10-10.0.0.12/24"))
			tt.stale(stale)
			vm, secret := fc.machineObjects("m1")
			allocations := fc.allocations()
			if vm == nil || secret == nil || len(allocations) != 1 || string(vm.UID) != later.VMUID {
				t.Fatalf("the later machine is not complete: VM %v, Secret %v, allocations %v", vm, secret, allocationNames(allocations))
			}
			removed := fc.recordRemovedClaims()
			if err := stale.Remove(); err != nil {
				t.Fatalf("rm of the stale entry must succeed, so rancher-machine drops it: %v", err)
			}
			vmAfter, secretAfter := fc.machineObjects("m1")
			if vmAfter == nil || vmAfter.UID != vm.UID || vmAfter.DeletionTimestamp != nil || *removed != "" {
				t.Errorf("the later VM was touched: %+v, removed claims %q", vmAfter, *removed)
			}
			if secretAfter == nil || secretAfter.UID != secret.UID || !equalSecrets(secret, secretAfter) {
				t.Errorf("the later VM's Secret was touched: %+v", secretAfter)
			}
			if got := fc.allocations(); len(got) != 1 || got[allocationNames(allocations)[0]].UID != allocations[allocationNames(allocations)[0]].UID {
				t.Errorf("the later VM's address was released: %v", allocationNames(got))
			}
			for _, want := range []string{"VM default/m1 is not this machine's", string(vm.UID), "was left alone"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, logs.String())
				}
			}
			// The later machine's own rm still removes everything.
			if err := savedAndLoaded(t, fc, later).Remove(); err != nil {
				t.Fatal(err)
			}
			fc.nothingLeft(t)
			if got := fc.allocations(); len(got) != 0 {
				t.Errorf("allocations left: %v", allocationNames(got))
			}
		})
	}
}

// stop, start, restart and kill of a stale entry refuse the later VM of the same name, saying whose it is not
// and what to do; they change nothing on it.
func TestPowerRefusesAnotherMachinesVM(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	stale, later := staleAndLater(t, fc, createOptions())
	vm, _ := fc.machineObjects("m1")
	vmi := fc.vmi()
	ops := map[string]func() error{"Stop": stale.Stop, "Start": stale.Start, "Restart": stale.Restart, "Kill": stale.Kill,
		"GetState": func() error { _, err := stale.GetState(); return err }, "GetIP": func() error { _, err := stale.GetIP(); return err }}
	for name, op := range ops {
		err := op()
		if err == nil {
			t.Fatalf("%s acted on another machine's VM", name)
		}
		for _, want := range []string{"VM default/m1 is not this machine's", stale.VMUID, later.VMUID, "rancher-machine rm -f m1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nlacks %q", name, err, want)
			}
		}
		if strings.Contains(strings.ToLower(err.Error()), "not found") {
			t.Errorf("%s: %v must not read as a gone machine", name, err)
		}
	}
	after, _ := fc.machineObjects("m1")
	if after.UID != vm.UID || fc.runStrategy() != kubevirtv1.RunStrategyRerunOnFailure || fc.vmi() == nil || fc.vmi().UID != vmi.UID {
		t.Errorf("the later VM was changed: runStrategy %s, VMI %v", fc.runStrategy(), fc.vmi())
	}
	// Its own machine still runs it.
	if err := savedAndLoaded(t, fc, later).Stop(); err != nil {
		t.Errorf("the later machine's own Stop: %v", err)
	}
}

// A power command's write carries the VM's UID: a VM replaced between the read and the write is not changed.
func TestPowerWritesCarryTheUID(t *testing.T) {
	fc, d := runningFake(t)
	fc.KV.PrependReactor("patch", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var p struct {
			Metadata struct{ UID string } `json:"metadata"`
		}
		if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p); err != nil || p.Metadata.UID != d.VMUID {
			t.Errorf("the runStrategy patch carries uid %q (%v), want %q", p.Metadata.UID, err, d.VMUID)
		}
		return false, nil, nil
	})
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A machine made by the reference driver or an earlier version (no UID, no create id saved) keeps the creator
// label check: a driver-made VM of its name is removed, another one is refused.
func TestLegacyStateKeepsTheCreatorCheck(t *testing.T) {
	fc, _ := runningFake(t)
	legacy := rmDriver(fc, "m1", "") // only name and namespace, as an old state
	if !legacy.legacyOwnership() {
		t.Fatal("not a legacy state")
	}
	if err := legacy.Stop(); err != nil {
		t.Fatalf("Stop of a legacy machine: %v", err)
	}
	if err := legacy.Remove(); err != nil {
		t.Fatalf("Remove of a legacy machine: %v", err)
	}
	fc.nothingLeft(t)

	fc.OK(fc.KV.KubevirtV1().VirtualMachines("default").Create(context.Background(), &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
		Name: "m1", Namespace: "default", Labels: map[string]string{config.LabelCreator: "harvester"}}}, metav1.CreateOptions{}))
	if err := legacy.Remove(); err == nil || !strings.Contains(err.Error(), "refusing to delete VM default/m1: it was not created by a node driver") {
		t.Fatalf("Remove of a VM without the creator label: %v", err)
	}
}

// The cloud-init Secret is created, never replaced: a Secret of its name — even one that looks like a leftover
// of this driver, since a create of the same name running beside would have made just that — stops the create
// and the pre-flight, untouched.
func TestCreateNeverOverwritesASecret(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"leftover or a concurrent create's", map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "m1"},
			"cloud-init Secret default/m1-cloudinit already exists without a VM: another create of machine m1 is running, or one died before making its VM"},
		{"someone else's", nil, "a Secret named m1-cloudinit already exists in namespace default and is not a leftover of this driver"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(healthy("10.0.0.5"))
			kubefake.CaptureLog(t)
			ctx := context.Background()
			fc.OK(kube.Create(ctx, fc.C, kube.Secrets, "default", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "m1-cloudinit", Namespace: "default",
				Labels: tt.labels}, Data: map[string][]byte{"userdata": []byte("theirs")}}))
			before, _ := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
			d := newTestDriver(t, fc, "m1", createOptions())
			if err := d.PreCreateCheck(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PreCreateCheck: %v\nwant %q", err, tt.want)
			}
			if err := d.Create(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Create: %v\nwant %q", err, tt.want)
			}
			vm, after := fc.machineObjects("m1")
			if vm != nil || after == nil || !equalSecrets(before, after) || string(after.Data["userdata"]) != "theirs" {
				t.Errorf("after the refused create: VM %v, Secret %+v", vm, after)
			}
		})
	}
}

// Two creates of one name: the second fails on the first's Secret and touches none of the first's objects;
// rm of the loser's entry leaves them too.
func TestSecondCreateOfANameLeavesTheFirst(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	first := newTestDriver(t, fc, "m1", createOptions())
	if err := first.Create(); err != nil {
		t.Fatal(err)
	}
	vm, secret := fc.machineObjects("m1")
	second := newTestDriver(t, fc, "m1", createOptions())
	second.ensureCreateID()
	loser := savedAndLoaded(t, fc, second) // its state as saved before Create
	if err := second.Create(); err == nil {
		t.Fatal("the second create of one name succeeded")
	}
	if err := loser.Remove(); err != nil {
		t.Fatalf("rm of the loser: %v", err)
	}
	vmAfter, secretAfter := fc.machineObjects("m1")
	if vmAfter == nil || vmAfter.UID != vm.UID || secretAfter == nil || !equalSecrets(secret, secretAfter) {
		t.Errorf("the first machine's objects were touched: VM %+v, Secret %+v", vmAfter, secretAfter)
	}
}

// The rollback deletes only what its create made, by UID: a Secret of the name made by someone else meanwhile,
// and a VM of the name that was there first, stay.
func TestRollbackDeletesOnlyItsOwnObjects(t *testing.T) {
	t.Run("VM of the name exists", func(t *testing.T) {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		theirs := fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-other": false}, nil)
		err := newTestDriver(t, fc, "m1", createOptions()).Create()
		if err == nil {
			t.Fatal("Create over an existing VM succeeded")
		}
		vm, secret := fc.machineObjects("m1")
		if vm == nil || vm.UID != theirs.UID || vm.DeletionTimestamp != nil {
			t.Errorf("the VM that was there first was touched: %+v", vm)
		}
		if secret != nil {
			t.Errorf("the create's own Secret was not rolled back")
		}
	})
	t.Run("Secret replaced meanwhile", func(t *testing.T) {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		var replacement *corev1.Secret
		fc.KV.PrependReactor("create", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
			// Between the Secret and the VM, the Secret is replaced by another of its name.
			ctx := context.Background()
			if err := kube.Delete(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit", metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
			var err error
			replacement, err = kube.Create(ctx, fc.C, kube.Secrets, "default", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "m1-cloudinit", Namespace: "default",
				Labels: map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "m1"}}})
			if err != nil {
				t.Error(err)
			}
			return true, nil, apierrors.NewInternalError(errors.New("injected"))
		})
		if err := newTestDriver(t, fc, "m1", createOptions()).Create(); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("Create: %v", err)
		}
		if _, secret := fc.machineObjects("m1"); secret == nil || secret.UID != replacement.UID {
			t.Errorf("the rollback deleted a Secret its create did not make: %+v", secret)
		}
	})
}
