package harvester

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/state"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kvtesting "kubevirt.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// runningMachine creates a machine through Create and returns a driver as later commands load it.
func runningMachine(t *testing.T, fc *fakeCluster) *Driver {
	t.Helper()
	d := newTestDriver(t, fc, "m1", createOptions())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	return savedAndLoaded(t, fc, d)
}

// runningFake is a fake Harvester whose imitated KubeVirt runs VMs at once, with machine m1 created and running.
func runningFake(t *testing.T) (*fakeCluster, *Driver) {
	t.Helper()
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	return fc, runningMachine(t, fc)
}

func (fc *fakeCluster) vmi() *kubevirtv1.VirtualMachineInstance {
	vmi, err := fc.KV.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return vmi
}

// vmiFromTracker reads the VMI from inside a reactor, where the fake's lock is held and its client cannot be used.
func (fc *fakeCluster) vmiFromTracker() *kubevirtv1.VirtualMachineInstance {
	obj, err := fc.KV.Tracker().Get(kubevirtv1.SchemeGroupVersion.WithResource("virtualmachineinstances"), "default", "m1")
	if err != nil {
		return nil
	}
	vmi, _ := obj.(*kubevirtv1.VirtualMachineInstance)
	return vmi
}

func (fc *fakeCluster) runStrategy() kubevirtv1.VirtualMachineRunStrategy {
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil || vm.Spec.RunStrategy == nil {
		return ""
	}
	return *vm.Spec.RunStrategy
}

func TestStopStartRestart(t *testing.T) {
	fc, d := runningFake(t)
	if s, err := d.GetState(); err != nil || s != state.Running {
		t.Fatalf("GetState = %v, %v", s, err)
	}
	if ip, err := d.GetIP(); err != nil || ip != "10.0.0.5" {
		t.Fatalf("GetIP = %q, %v", ip, err)
	}

	if err := d.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if fc.vmi() != nil || fc.runStrategy() != kubevirtv1.RunStrategyHalted {
		t.Fatalf("after Stop: VMI %v, runStrategy %s", fc.vmi(), fc.runStrategy())
	}
	if s, _ := d.GetState(); s != state.Stopped {
		t.Errorf("GetState after Stop = %v", s)
	}
	if _, err := d.GetIP(); err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("GetIP of a stopped VM: %v", err)
	}

	if err := d.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	first := fc.vmi()
	if first == nil || fc.runStrategy() != kubevirtv1.RunStrategyRerunOnFailure {
		t.Fatalf("after Start: VMI %v, runStrategy %s", first, fc.runStrategy())
	}
	if err := d.Start(); err != nil || fc.vmi().UID != first.UID {
		t.Fatalf("Start of a running VM must change nothing: %v", err)
	}

	if err := d.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if second := fc.vmi(); second == nil || second.UID == first.UID {
		t.Fatalf("Restart must end with a new VMI: before %s, after %v", first.UID, second)
	}
}

// The guest shut itself down: the VMI is Succeeded and runStrategy is still RerunOnFailure, so KubeVirt will not
// start it again on its own. Start must.
func TestStartAfterGuestShutdown(t *testing.T) {
	fc, d := runningFake(t)
	ctx := context.Background()
	vmi := fc.vmi()
	vmi.Status.Phase = kubevirtv1.Succeeded
	fc.OK(fc.KV.KubevirtV1().VirtualMachineInstances("default").Update(ctx, vmi, metav1.UpdateOptions{}))
	if s, _ := d.GetState(); s != state.Stopped {
		t.Fatalf("GetState after guest shutdown = %v", s)
	}
	if err := d.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := fc.vmi(); got == nil || got.UID == vmi.UID || got.Status.Phase != kubevirtv1.Running {
		t.Fatalf("Start must bring up a new running VMI, got %+v", got)
	}
}

func TestKillUsesTheStopSubresource(t *testing.T) {
	fc, d := runningFake(t)
	var grace atomic.Int64
	grace.Store(-1)
	fc.KV.PrependReactor("put", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "stop" {
			return false, nil, nil
		}
		opts := a.(kvtesting.PutAction[*kubevirtv1.StopOptions]).GetOptions()
		grace.Store(*opts.GracePeriod)
		// What virt-api does: power off now. (Not from inside the reactor: the fake holds its lock here.)
		go func() {
			_ = fc.KV.KubevirtV1().VirtualMachineInstances("default").Delete(context.Background(), "m1", metav1.DeleteOptions{})
		}()
		return true, nil, nil
	})
	if err := d.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if grace.Load() != 0 {
		t.Errorf("Kill must ask for a zero grace period, asked for %d", grace.Load())
	}
	if fc.vmi() != nil {
		t.Errorf("the VMI still exists after Kill")
	}
}

func TestKillWithoutTheSubresourceAPI(t *testing.T) {
	fc, d := runningFake(t)
	var deleteGrace atomic.Int64
	deleteGrace.Store(-1)
	fc.KV.PrependReactor("put", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// No subresources.kubevirt.io on this API server: a 404 for the path, naming no object.
		return true, nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound}}
	})
	fc.KV.PrependReactor("delete", "virtualmachineinstances", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if g := a.(k8stesting.DeleteAction).GetDeleteOptions().GracePeriodSeconds; g != nil {
			deleteGrace.Store(*g)
		}
		return false, nil, nil
	})
	// KubeVirt powers off within the VMI's own grace period: that must be 0 before the VM is halted.
	var graceBeforeHalt atomic.Int64
	graceBeforeHalt.Store(-1)
	fc.KV.PrependReactor("patch", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
		if vmi := fc.vmiFromTracker(); vmi != nil && vmi.Spec.TerminationGracePeriodSeconds != nil {
			graceBeforeHalt.Store(*vmi.Spec.TerminationGracePeriodSeconds)
		}
		return false, nil, nil
	})
	if err := d.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if fc.vmi() != nil || fc.runStrategy() != kubevirtv1.RunStrategyHalted || deleteGrace.Load() != 0 || graceBeforeHalt.Load() != 0 {
		t.Errorf("after Kill: VMI %v, runStrategy %s, VMI delete grace %d, VMI grace period when halted %d",
			fc.vmi(), fc.runStrategy(), deleteGrace.Load(), graceBeforeHalt.Load())
	}
}

func TestStateOfMissingVMSaysNotFound(t *testing.T) {
	fc := newFakeCluster(t)
	d := rmDriver(fc, "ghost", "")
	// rancher-machine recognises a gone machine by these words.
	if s, err := d.GetState(); s != state.None || err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("GetState = %v, %v", s, err)
	}
	for name, op := range map[string]func() error{"Start": d.Start, "Restart": d.Restart} {
		if err := op(); err == nil || !strings.Contains(err.Error(), "VirtualMachine default/ghost not found") {
			t.Errorf("%s of a missing VM: %v", name, err)
		}
	}
}

// rancher-machine asks GetState right after Create: the first such call answers from what the create's watch saw
// last (running with an address), with no request; later calls, stale views and any power command read again.
func TestGetStateAfterCreateReadsNothing(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	reads := func() int {
		n := 0
		for _, a := range append(fc.KV.Actions(), fc.Dyn.Actions()...) {
			if a.GetVerb() == "get" {
				n++
			}
		}
		fc.KV.ClearActions()
		fc.Dyn.ClearActions()
		return n
	}
	reads()
	if s, err := d.GetState(); err != nil || s != state.Running {
		t.Fatalf("GetState after Create = %v, %v", s, err)
	}
	if n := reads(); n != 0 {
		t.Errorf("the first GetState after Create made %d reads, want 0", n)
	}
	if s, err := d.GetState(); err != nil || s != state.Running || reads() != 2 {
		t.Errorf("a second GetState = %v, %v; want it read the VM and VMI", s, err)
	}

	d.created = &seenAt{at: time.Now().Add(-createdFresh)}
	if _, _ = d.GetState(); reads() != 2 {
		t.Errorf("a stale view was trusted")
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil { // a start's wait leaves a view too; a stop must drop it
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if s, _ := d.GetState(); s != state.Stopped {
		t.Errorf("GetState after Stop = %v", s)
	}
}
