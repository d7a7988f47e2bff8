package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

const secretUserData = "#cloud-config\nwrite_files: [{path: /etc/marker, content: user-data-secret-marker}]\n"

func createOptions() config.Options {
	return configtest.With(configtest.MinimalOptions(),
		config.FlagKubeconfigContent, configtest.Kubeconfig,
		config.FlagUserData, secretUserData,
		config.FlagSSHPassword, "password-secret-marker",
		config.FlagCreateTimeout, "30")
}

func TestCreate(t *testing.T) {
	// The credential as Rancher passes it, in the environment rancher-machine fills the flag's value from: the
	// saved state holds no secret (a credential given on the command line alone is saved; see savedState).
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", configtest.Kubeconfig)
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	logs := kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())

	if err := d.PreCreateCheck(); err != nil {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if d.IPAddress != "10.0.0.5" {
		t.Errorf("IPAddress = %q", d.IPAddress)
	}
	ctx := context.Background()
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != vm.UID || secret.OwnerReferences[0].Kind != "VirtualMachine" {
		t.Errorf("Secret owner references %+v, want the VM (uid %s)", secret.OwnerReferences, vm.UID)
	}
	if secret.Labels[config.LabelCreator] != config.CreatorName || vm.Labels[config.LabelCreator] != config.CreatorName {
		t.Errorf("ownership labels missing: secret %v, vm %v", secret.Labels, vm.Labels)
	}
	if len(secret.Data[objects.SecretKeyUserData]) == 0 {
		t.Errorf("the Secret carries no user data")
	}

	// The key is in the store, private and complete.
	info, err := os.Stat(d.GetSSHKeyPath())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v, mode %v", err, info)
	}
	pub, err := os.ReadFile(d.GetSSHKeyPath() + ".pub")
	if err != nil || !strings.HasPrefix(string(pub), "ssh-rsa ") {
		t.Fatalf("public key: %v %q", err, pub)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(d.GetSSHKeyPath()), ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left in the store: %v", leftovers)
	}

	// What the machine state persists and what the log shows never hold a secret.
	key, _ := os.ReadFile(d.GetSSHKeyPath())
	raw, _ := json.Marshal(d) // what rancher-machine saves (GetConfigRaw)
	for _, secret := range []string{"not-a-real-token", "user-data-secret-marker", "password-secret-marker", string(key[40:80])} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log contains %q:\n%s", secret, logs.String())
		}
		if strings.Contains(string(raw), secret) {
			t.Errorf("the saved state contains %q: %s", secret, raw)
		}
	}
	for _, milestone := range []string{"Creating VM default/m1", "Waiting for VM default/m1 to run and report an IP", "VM default/m1 is running at 10.0.0.5"} {
		if !strings.Contains(logs.String(), milestone) {
			t.Errorf("the log lacks the milestone %q:\n%s", milestone, logs.String())
		}
	}
}

// Every API write a create makes fails in turn: each time, Create reports the cause and leaves nothing behind.
func TestCreateRollsBackEveryFailedWrite(t *testing.T) {
	writes := []struct{ verb, resource string }{
		{"create", "secrets"},
		{"create", "virtualmachines"},
		{"patch", "secrets"},
	}
	for _, w := range writes {
		t.Run(w.verb+" "+w.resource, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(healthy("10.0.0.5"))
			kubefake.CaptureLog(t)
			d := newTestDriver(t, fc, "m1", createOptions())
			fired := fc.FailOn(w.verb, w.resource, apierrors.NewInternalError(errors.New("injected failure")))
			err := d.Create()
			if err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Create: %v", err)
			}
			if fired.Load() != 1 {
				t.Fatalf("the injected failure fired %d times", fired.Load())
			}
			fc.nothingLeft(t)
		})
	}
}

// createOn creates machine m1 with a create timeout of timeoutSecs on a fake Harvester whose imitated KubeVirt
// shapes each VMI with shape; it returns the fake, how long Create took and its error.
func createOn(t *testing.T, shape vmiShape, timeoutSecs int) (*fakeCluster, time.Duration, error) {
	t.Helper()
	fc := newFakeCluster(t)
	fc.kubeVirt(shape)
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagCreateTimeout, strconv.Itoa(timeoutSecs)))
	start := time.Now()
	err := d.Create()
	return fc, time.Since(start), err
}

func TestCreateFailsFastOnStuckStateAndRollsBack(t *testing.T) {
	fc, took, err := createOn(t, func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Scheduling
		vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{
			Type: "PodScheduled", Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient memory.",
		}}
		return kubevirtv1.VirtualMachineStatusUnschedulable
	}, 600)
	if err == nil || !strings.Contains(err.Error(), "no Harvester host can run the VM") || !strings.Contains(err.Error(), "Insufficient memory") {
		t.Fatalf("Create: %v", err)
	}
	if took > time.Minute {
		t.Errorf("Create took %v to notice a terminal state; it must not wait for the timeout", took)
	}
	fc.nothingLeft(t)
}

func TestCreateTimeoutSaysWhatWasAwaited(t *testing.T) {
	fc, _, err := createOn(t, func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Running // running, but no agent and no IP
		return kubevirtv1.VirtualMachineStatusRunning
	}, 2)
	for _, want := range []string{"timed out after 2s waiting for VM default/m1 to run and report an IP on nic-0",
		"last seen: VM Running, VMI Running, guest agent not connected, nic-0 has no IP", "qemu-guest-agent"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Create error lacks %q: %v", want, err)
		}
	}
	fc.nothingLeft(t)
}

func TestCreateReportsFailedCleanup(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	fc.FailOn("patch", "secrets", apierrors.NewInternalError(errors.New("injected patch failure")))
	fc.FailOn("delete", "virtualmachines", apierrors.NewBadRequest("injected delete failure")) // not transient: a 500 would be retried
	err := d.Create()
	if err == nil || !strings.Contains(err.Error(), "injected patch failure") || !strings.Contains(err.Error(), "injected delete failure") ||
		!strings.Contains(err.Error(), "the cleanup after it also failed and left in Harvester: VM default/m1") {
		t.Fatalf("the error must carry the cause and the cleanup failure: %v", err)
	}
}

// A watch the server closes in the middle of the wait is resumed: the VM becoming ready after that is seen.
func TestWaitSurvivesClosedWatch(t *testing.T) {
	fc := newFakeCluster(t)
	var watches atomic.Int32
	fc.KV.PrependWatchReactor("virtualmachineinstances", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if watches.Add(1) > 1 {
			return false, nil, nil // later watches: the tracker's
		}
		w := watch.NewFake()
		go func() { time.Sleep(200 * time.Millisecond); w.Stop() }() // the server drops the first watch
		return true, w, nil
	})
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	go func() {
		// KubeVirt answers only after the first watch was dropped.
		kubefake.Eventually(t, "the first VMI watch is dropped and replaced", func() bool { return watches.Load() >= 2 })
		fc.kubeVirt(healthy("10.0.0.9"))
		ctx := context.Background()
		vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
		if err == nil {
			fc.reconcile(ctx, vm, healthy("10.0.0.9"))
		}
	}()
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if d.IPAddress != "10.0.0.9" {
		t.Errorf("IPAddress = %q", d.IPAddress)
	}
}

// The IP comes and goes while the agent restarts and a link-local address shows first: only a global address of
// nic-0 counts.
func TestWaitIgnoresFlappingAndLinkLocalAddresses(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Running
		vmi.Status.Interfaces = []kubevirtv1.VirtualMachineInstanceNetworkInterface{{Name: config.PrimaryNIC, IP: "fe80::5054:ff:fe00:1"}}
		return kubevirtv1.VirtualMachineStatusRunning
	})
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	ctx := context.Background()
	vmis := fc.KV.KubevirtV1().VirtualMachineInstances("default")
	setIfaces := func(ifaces ...kubevirtv1.VirtualMachineInstanceNetworkInterface) {
		vmi, err := vmis.Get(ctx, "m1", metav1.GetOptions{})
		if err != nil {
			t.Errorf("get VMI: %v", err)
			return
		}
		vmi.Status.Interfaces = ifaces
		if _, err := vmis.Update(ctx, vmi, metav1.UpdateOptions{}); err != nil {
			t.Errorf("update VMI: %v", err)
		}
	}
	go func() {
		kubefake.Eventually(t, "the VMI exists", func() bool { _, err := vmis.Get(ctx, "m1", metav1.GetOptions{}); return err == nil })
		time.Sleep(100 * time.Millisecond)
		setIfaces() // the agent restarts: no interfaces
		time.Sleep(100 * time.Millisecond)
		setIfaces(kubevirtv1.VirtualMachineInstanceNetworkInterface{Name: "", IP: "10.42.0.1"}) // cni0, not a VM NIC
		time.Sleep(100 * time.Millisecond)
		setIfaces(kubevirtv1.VirtualMachineInstanceNetworkInterface{Name: "", IP: "10.42.0.1"},
			kubevirtv1.VirtualMachineInstanceNetworkInterface{Name: config.PrimaryNIC, IP: "fe80::1", IPs: []string{"fe80::1", "192.168.50.7/24", "2001:db8::7"}})
	}()
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if d.IPAddress != "192.168.50.7" || d.IPv6Address != "2001:db8::7" {
		t.Errorf("addresses %q %q", d.IPAddress, d.IPv6Address)
	}
}

// The VMI watch of a real API server filters by name; the fakes do not. Other VMs' events must not count.
func TestWaitIgnoresOtherVMs(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	other := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}}
	healthy("10.9.9.9")(nil, other)
	fc.OK(fc.KV.KubevirtV1().VirtualMachineInstances("default").Create(ctx, other, metav1.CreateOptions{}))
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	if d.IPAddress != "10.0.0.5" {
		t.Errorf("IPAddress = %q, taken from another VM", d.IPAddress)
	}
}

// A Rancher user sees the plugin's stdout (Info) and, in the machine's error, only the last 4 KiB of it: the
// milestones go there, the detail to stderr (rancher-machine's debug output).
func TestMilestonesAndDetailGoToDifferentStreams(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	info, debug := &kubefake.SyncBuffer{}, &kubefake.SyncBuffer{}
	kubefake.CaptureLogs(t, info, debug)
	if err := newTestDriver(t, fc, "m1", createOptions()).Create(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.String(), "VM default/m1 is running at 10.0.0.5") || strings.Contains(info.String(), "Created Secret") {
		t.Errorf("milestones:\n%s", info.String())
	}
	if !strings.Contains(debug.String(), "Created Secret default/m1-cloudinit") {
		t.Errorf("detail:\n%s", debug.String())
	}
}

// shortGraces makes the states that may pass by count after a short while, for the test's duration.
func shortGraces(t *testing.T, grace time.Duration) {
	t.Helper()
	volumes, recheck := graceVolumes, graceRecheck
	graceVolumes, graceRecheck = grace, grace/4
	t.Cleanup(func() { graceVolumes, graceRecheck = volumes, recheck })
}

// Harvester creates the PVCs a moment after the VM: KubeVirt may say ErrorPvcNotFound meanwhile. That passes.
func TestCreateWaitsOutATransientState(t *testing.T) {
	shortGraces(t, 2*time.Second)
	fc := newFakeCluster(t)
	fc.kubeVirt(func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Pending
		return kubevirtv1.VirtualMachineStatusPvcNotFound
	})
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	go func() {
		ctx := context.Background()
		vmis := fc.KV.KubevirtV1().VirtualMachineInstances("default")
		kubefake.Eventually(t, "the VMI exists", func() bool { _, err := vmis.Get(ctx, "m1", metav1.GetOptions{}); return err == nil })
		time.Sleep(500 * time.Millisecond) // less than the grace
		vmi, _ := vmis.Get(ctx, "m1", metav1.GetOptions{})
		healthy("10.0.0.5")(nil, vmi)
		fc.OK(vmis.Update(ctx, vmi, metav1.UpdateOptions{}))
		vm, _ := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
		vm.Status.PrintableStatus = kubevirtv1.VirtualMachineStatusRunning
		fc.OK(fc.KV.KubevirtV1().VirtualMachines("default").UpdateStatus(ctx, vm, metav1.UpdateOptions{}))
	}()
	if err := d.Create(); err != nil {
		t.Fatalf("a transient ErrorPvcNotFound ended the create: %v", err)
	}
}

// A state that may pass by but lasts its grace ends the create, with the reason, and rolls back.
func TestCreateFailsOnALastingTransientState(t *testing.T) {
	shortGraces(t, time.Second)
	fc, took, err := createOn(t, func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Pending
		return kubevirtv1.VirtualMachineStatusPvcNotFound
	}, 600)
	if err == nil || !strings.Contains(err.Error(), "the VM's volumes are broken (ErrorPvcNotFound)") || !strings.Contains(err.Error(), "(for 1s)") {
		t.Fatalf("Create: %v", err)
	}
	if took > 30*time.Second {
		t.Errorf("took %v: a lasting state must end the create after its grace, not the timeout", took)
	}
	fc.nothingLeft(t)
}

// Under load the API server's first answer may not hold the VM just created yet: not seen is not deleted.
func TestCreateToleratesAStaleFirstList(t *testing.T) {
	fc := newFakeCluster(t)
	var lists atomic.Int32
	fc.KV.PrependReactor("list", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if lists.Add(1) == 1 {
			return true, &kubevirtv1.VirtualMachineList{}, nil // a cache that has not caught up
		}
		return false, nil, nil
	})
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	go func() {
		// A real watch replays what the stale list missed; the fake's does not, so the VM changes once more.
		ctx := context.Background()
		vms := fc.KV.KubevirtV1().VirtualMachines("default")
		kubefake.Eventually(t, "the driver listed VMs", func() bool { return lists.Load() > 0 })
		time.Sleep(300 * time.Millisecond)
		vm, err := vms.Get(ctx, "m1", metav1.GetOptions{})
		if err == nil {
			vm.Annotations["touched"] = "yes"
			_, err = vms.Update(ctx, vm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("touching the VM: %v", err)
		}
	}()
	if err := newTestDriver(t, fc, "m1", createOptions()).Create(); err != nil {
		t.Fatalf("a VM not in the first list was taken for deleted: %v", err)
	}
}

// The VM a create made is deleted while the create waits, and another VM of its name is made (another create, or
// someone by hand): the create does not wait for that VM, nor report it as its machine, nor touch it.
func TestCreateDoesNotWaitForAReplacedVM(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	vms := fc.KV.KubevirtV1().VirtualMachines("default")
	var replaced atomic.Bool
	fc.kubeVirt(func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		if replaced.CompareAndSwap(false, true) {
			go func() { // the first VM is replaced by one of its name, which soon runs with an IP
				ctx := context.Background()
				if err := vms.Delete(ctx, vm.Name, metav1.DeleteOptions{}); err != nil {
					t.Errorf("deleting the create's VM: %v", err)
				}
				other := vm.DeepCopy()
				other.ObjectMeta = metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace, Labels: vm.Labels}
				other.Status = kubevirtv1.VirtualMachineStatus{}
				if _, err := vms.Create(ctx, other, metav1.CreateOptions{}); err != nil {
					t.Errorf("making another VM of its name: %v", err)
				}
			}()
			vmi.Status.Phase = kubevirtv1.Scheduling
			return kubevirtv1.VirtualMachineStatusStarting
		}
		return healthy("10.0.0.9")(vm, vmi)
	})
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagCreateTimeout, "60"))
	err := d.Create()
	// The replacement is a delete, then a create: a wait that reads the VM between the two sees it deleted
	// (errVMDeleted), one that reads it after both sees it replaced (errVMReplaced). Which one depends on the
	// scheduler; either way the create ends without waiting for the other VM and leaves it alone.
	if !errors.Is(err, errVMReplaced) && !errors.Is(err, errVMDeleted) {
		t.Fatalf("Create: %v, want it to say its VM was deleted or replaced", err)
	}
	vm, err := vms.Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil || string(vm.UID) == d.VMUID {
		t.Fatalf("the other VM of the name must be left alone: %v (uid %v, the create's %s)", err, vm, d.VMUID)
	}
}

// A VM of the machine's name that is not the one the create made (another UID) ends the wait at once: it is
// reported as a replacement, never waited for as the machine.
func TestWaitEndsAtAVMOfItsNameThatIsNotOurs(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	ctx := context.Background()
	theirs := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"}}
	if _, err := fc.KV.KubevirtV1().VirtualMachines("default").Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := newTestDriver(t, fc, "m1", createOptions())
	d.VMUID = "the-create's-vm"
	c, err := d.api()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.waitUntilReady(ctx, c, 30*time.Second); !errors.Is(err, errVMReplaced) {
		t.Fatalf("waitUntilReady: %v, want errVMReplaced", err)
	}
}

// A wait's two watches need not deliver at once: a snapshot whose VM is still the create's (its deletion not yet
// seen) and whose VMI is another VM's, of the same name, is not the create's machine.
func TestReplacedKnowsAnotherVMsVMI(t *testing.T) {
	ours, other := types.UID("uid-ours"), types.UID("uid-other")
	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", UID: ours}}
	vmiOf := func(uid types.UID) *kubevirtv1.VirtualMachineInstance {
		return &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "m1", OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(&kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", UID: uid}}, kubevirtv1.VirtualMachineGroupVersionKind)}}}
	}
	for _, tc := range []struct {
		name string
		s    snapshot
		uid  string
		want bool
	}{
		{"ours", snapshot{VM: vm, VMI: vmiOf(ours)}, string(ours), false},
		{"another VM", snapshot{VM: &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{UID: other}}}, string(ours), true},
		{"our VM, another VM's VMI", snapshot{VM: vm, VMI: vmiOf(other)}, string(ours), true},
		{"a VMI without its controller", snapshot{VM: vm, VMI: &kubevirtv1.VirtualMachineInstance{}}, string(ours), false},
		{"the create's UID not known", snapshot{VM: vm, VMI: vmiOf(other)}, "", false},
	} {
		if got := replaced(tc.s, tc.uid); got != tc.want {
			t.Errorf("%s: replaced %v, want %v", tc.name, got, tc.want)
		}
	}
}
