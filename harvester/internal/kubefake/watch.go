package kubefake

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	kvfake "kubevirt.io/client-go/kubevirt/fake"
)

// listThenWatch closes a gap in KubeVirt's generated fake clientset: its watch starts "now" and ignores the
// resource version the informer listed at, so whatever changes between the driver's list and its watch — the
// imitated KubeVirt deleting the VMI the driver waits on, say — is never delivered, and the wait hangs until its
// deadline. A real API server replays those changes from the listed version.
//
// The fake runs each request's reactors under one lock, so a list and a tracker watch opened by the same reactor
// see the same state: nothing can slip between them. Each list opens that watch and parks it under its resource
// version; the watch that follows the list (asking for that version) is handed the parked one.
type listThenWatch struct {
	tracker k8stesting.ObjectTracker
	mu      sync.Mutex
	parked  map[parkKey][]parkedWatch
}

type parkKey struct{ resource, namespace, version string }

type parkedWatch struct {
	w      watch.Interface
	parked time.Time
}

// unclaimedAfter is how long a parked watch waits for the watch request of its informer; one whose informer
// stopped between list and watch is stopped after that, so the tracker's 100-event buffer never fills.
const unclaimedAfter = 30 * time.Second

func installListThenWatch(cs *kvfake.Clientset) {
	lw := &listThenWatch{tracker: cs.Tracker(), parked: map[parkKey][]parkedWatch{}}
	cs.PrependReactor("list", "*", lw.park)
	cs.PrependWatchReactor("*", lw.claim)
}

// park opens a tracker watch at the state the list is about to read, and lets the tracker's own reactor answer
// the list (handled false).
func (lw *listThenWatch) park(a k8stesting.Action) (bool, runtime.Object, error) {
	list, ok := a.(k8stesting.ListActionImpl)
	if !ok {
		return false, nil, nil
	}
	current, err := lw.tracker.List(list.GetResource(), list.GetKind(), list.GetNamespace())
	if err != nil {
		return false, nil, nil
	}
	lm, err := meta.ListAccessor(current)
	if err != nil {
		return false, nil, nil
	}
	w, err := lw.tracker.Watch(list.GetResource(), list.GetNamespace())
	if err != nil {
		return false, nil, nil
	}
	key := parkKey{list.GetResource().String(), list.GetNamespace(), lm.GetResourceVersion()}
	now := time.Now()
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for k, ws := range lw.parked {
		kept := ws[:0]
		for _, p := range ws {
			if now.Sub(p.parked) > unclaimedAfter {
				p.w.Stop()
				continue
			}
			kept = append(kept, p)
		}
		if len(kept) == 0 {
			delete(lw.parked, k)
		} else {
			lw.parked[k] = kept
		}
	}
	lw.parked[key] = append(lw.parked[key], parkedWatch{w, now})
	return false, nil, nil
}

// claim hands a watch from a listed version the watch parked by that list; other watches go to the tracker.
func (lw *listThenWatch) claim(a k8stesting.Action) (bool, watch.Interface, error) {
	wa, ok := a.(k8stesting.WatchAction)
	if !ok || wa.GetWatchRestrictions().ResourceVersion == "" {
		return false, nil, nil
	}
	key := parkKey{wa.GetResource().String(), wa.GetNamespace(), wa.GetWatchRestrictions().ResourceVersion}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	ws := lw.parked[key]
	if len(ws) == 0 {
		return false, nil, nil
	}
	// Watches parked at one version saw the same state and get the same events since: any will do.
	if len(ws) == 1 {
		delete(lw.parked, key)
	} else {
		lw.parked[key] = ws[1:]
	}
	return true, ws[0].w, nil
}
