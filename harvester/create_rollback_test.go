package harvester

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// fastRetries makes kube.RetryTransient's pauses short for the test.
func fastRetries(t *testing.T) {
	saved := kube.TransientBackoff
	kube.TransientBackoff.Duration = time.Millisecond
	t.Cleanup(func() { kube.TransientBackoff = saved })
}

// fault makes requests fail until it is spent or stopped, and counts the requests it saw.
type fault struct{ left, tries atomic.Int32 }

func (f *fault) stop() { f.left.Store(0) }

// failTimes makes the next n requests of verb on resource fail with err.
func (fc *fakeCluster) failTimes(verb, resource string, n int32, err error) *fault {
	f := &fault{}
	f.left.Store(n)
	react := func(k8stesting.Action) (bool, runtime.Object, error) {
		f.tries.Add(1)
		if f.left.Add(-1) >= 0 {
			return true, nil, err
		}
		return false, nil, nil
	}
	fc.KV.PrependReactor(verb, resource, react)
	fc.Dyn.PrependReactor(verb, resource, react)
	return f
}

// always is a count of failures no test outlasts.
const always = 1 << 20

var unavailable = apierrors.NewServiceUnavailable("the server is currently unable to handle the request")

// The API server carries out the create of the VM or of its Secret, but the answer is lost (the connection
// breaks): the create fails naming the cause, and its rollback finds what was made by the create's id and removes
// it. A read of the rollback that meets a 503 is retried.
func TestRollbackFindsWhatALostAnswerMade(t *testing.T) {
	fastRetries(t)
	for _, tt := range []struct {
		name, lost  string
		unavailable bool // the rollback's first read of the lost object meets a 503
	}{
		{name: "VM", lost: "virtualmachines"},
		{name: "Secret", lost: "secrets"},
		{name: "VM then 503", lost: "virtualmachines", unavailable: true},
		{name: "Secret then 503", lost: "secrets", unavailable: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(healthy("10.0.0.5"))
			logs := kubefake.CaptureLog(t)
			d := checkedDriver(t, fc, "m1", createOptions())
			lost := fc.LoseAnswer(tt.lost)
			var reads *fault
			if tt.unavailable {
				reads = fc.failTimes("get", tt.lost, 1, unavailable)
			}
			err := d.Create()
			if err == nil || !strings.Contains(err.Error(), "Harvester at harvester.test:6443 is unreachable") || strings.Contains(err.Error(), "cleanup") {
				t.Fatalf("Create must fail on the lost answer alone, its rollback complete: %v", err)
			}
			if lost.Load() != 1 {
				t.Fatalf("the answer was lost %d times", lost.Load())
			}
			if reads != nil && reads.tries.Load() < 2 {
				t.Errorf("the rollback read %s %d times: the 503 was not retried", tt.lost, reads.tries.Load())
			}
			if tt.lost == "virtualmachines" && !strings.Contains(logs.String(), "The answer to the VM's create was lost, but the API server made it") {
				t.Errorf("the log does not say the VM was found:\n%s", logs)
			}
			fc.nothingLeft(t)
			if err := d.Remove(); err != nil {
				t.Errorf("rm after the rollback: %v", err)
			}
		})
	}
}

// Every request of a rollback meets a 503 or a 429 once: each is retried, and the rollback leaves nothing.
func TestRollbackRetriesTransientFailures(t *testing.T) {
	fastRetries(t)
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := checkedDriver(t, fc, "m1", createOptions())
	fc.FailOn("patch", "secrets", apierrors.NewInternalError(errors.New("injected patch failure"))) // the cause
	faults := []*fault{
		fc.failTimes("get", "virtualmachines", 1, unavailable),
		fc.failTimes("update", "virtualmachines", 1, apierrors.NewTooManyRequests("slow down", 1)),
		fc.failTimes("delete", "virtualmachines", 1, unavailable),
		fc.failTimes("delete", "secrets", 1, apierrors.NewTooManyRequests("slow down", 1)),
	}
	err := d.Create()
	if err == nil || !strings.Contains(err.Error(), "injected patch failure") || strings.Contains(err.Error(), "cleanup") {
		t.Fatalf("Create must fail on its cause alone, its rollback complete: %v", err)
	}
	for i, f := range faults {
		if f.tries.Load() < 2 {
			t.Errorf("fault %d: the request was tried %d times", i, f.tries.Load())
		}
	}
	fc.nothingLeft(t)
}

// A VM of the machine's name that someone else made is not this create's, even when the answer to this create's
// own VM was lost: the rollback leaves it exactly as it was and removes only the Secret it made.
func TestRollbackLeavesAVMOfItsNameThatIsNotItsOwn(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	d := checkedDriver(t, fc, "m1", createOptions())
	foreign := fc.vmWithVolumes("m1", map[string]bool{"their-disk": false}, map[string]string{config.AnnotationCreateID: "someone-else"})
	// The VM's create is refused as a connection that broke: the rollback cannot tell whether it was carried out.
	fc.failTimes("create", "virtualmachines", 1, kubefake.ConnectionReset("Post", "/virtualmachines"))
	err := d.Create()
	if err == nil || !strings.Contains(err.Error(), "is unreachable") || strings.Contains(err.Error(), "cleanup") {
		t.Fatalf("Create: %v", err)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil || vm.UID != foreign.UID || vm.ResourceVersion != foreign.ResourceVersion {
		t.Fatalf("the foreign VM was touched: %v, %+v", err, vm)
	}
	if vms, _, secrets := fc.objects(); vms != 1 || secrets != 0 {
		t.Errorf("%d VMs and %d Secrets left, want the foreign VM alone", vms, secrets)
	}
}

// A rollback that cannot remove everything names each object it leaves and why; the machine's rm then removes
// them (it finds them by the create's id).
func TestPartialRollbackNamesWhatIsLeft(t *testing.T) {
	fastRetries(t)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "m1", errors.New("injected"))
	for _, tt := range []struct {
		name   string
		inject func(fc *fakeCluster) (restore func())
		want   []string
	}{{
		name: "the VM cannot be deleted",
		inject: func(fc *fakeCluster) func() {
			fc.FailOn("patch", "secrets", apierrors.NewInternalError(errors.New("injected patch failure"))) // the cause
			return fc.failTimes("delete", "virtualmachines", always, forbidden).stop
		},
		want: []string{"injected patch failure", "the cleanup after it also failed and left in Harvester: VM default/m1 (uid ",
			") with its volumes m1-disk-0-", "cannot delete VM default/m1: the credential is not allowed to",
			"; Secret default/m1-cloudinit (uid ", "(kept while the VM may exist)", "Removing the machine (rancher-machine rm m1"},
	}, {
		name: "the lost VM cannot be read",
		inject: func(fc *fakeCluster) func() {
			fc.LoseAnswer("virtualmachines")
			return fc.failTimes("get", "virtualmachines", always, unavailable).stop
		},
		want: []string{"cannot create VirtualMachine default/m1: Harvester at harvester.test:6443 is unreachable",
			"left in Harvester: VM default/m1, which the create's lost answer may have made (cannot read VM default/m1: ",
			"Secret default/m1-cloudinit (uid ", "(kept while the VM may exist)"},
	}, {
		name: "the Secret cannot be deleted",
		inject: func(fc *fakeCluster) func() {
			fc.FailOn("patch", "secrets", apierrors.NewInternalError(errors.New("injected patch failure")))
			return fc.failTimes("delete", "secrets", always, unavailable).stop
		},
		want: []string{"left in Harvester: Secret default/m1-cloudinit (uid ", "(cannot delete Secret default/m1-cloudinit: "},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(healthy("10.0.0.5"))
			kubefake.CaptureLog(t)
			d := checkedDriver(t, fc, "m1", createOptions())
			restore := tt.inject(fc)
			err := d.Create()
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("the error does not say %q: %v", want, err)
				}
			}
			if strings.Contains(tt.name, "VM") && strings.Contains(err.Error(), "Secret default/m1-cloudinit (uid ") {
				if _, _, secrets := fc.objects(); secrets != 1 {
					t.Errorf("the Secret of a VM left behind must be kept, %d Secrets", secrets)
				}
			}
			restore()
			if err := d.Remove(); err != nil {
				t.Fatalf("rm after the partial rollback: %v", err)
			}
			fc.nothingLeft(t)
		})
	}
}
