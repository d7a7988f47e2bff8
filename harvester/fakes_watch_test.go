package harvester

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The gap kubefake's list-then-watch closes, made deterministic: the VMI goes away after the driver's list and
// before its watch. The wait must see that (without it, it hangs until its deadline).
func TestFakeWatchDeliversChangesBetweenListAndWatch(t *testing.T) {
	fc, d := runningFake(t)
	vmis := kubevirtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	var deleted atomic.Bool
	fc.KV.PrependWatchReactor("virtualmachineinstances", func(k8stesting.Action) (bool, watch.Interface, error) {
		if deleted.CompareAndSwap(false, true) {
			// Reactors run under the fake's lock: the tracker is called directly.
			if err := fc.KV.Tracker().Delete(vmis, "default", "m1"); err != nil {
				t.Errorf("deleting the VMI between list and watch: %v", err)
			}
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.waitNoVMI(ctx, fc.C); err != nil {
		t.Fatal(err)
	}
	if !deleted.Load() {
		t.Fatal("the VMI was not deleted between list and watch: the test did not exercise the gap")
	}
}
