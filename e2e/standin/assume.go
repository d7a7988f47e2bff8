package standin

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// assumedPods is kube-scheduler's assume step (k8s.io/kubernetes pkg/scheduler/schedule_one.go assume, with
// pkg/scheduler/backend/cache AssumePod): a Pod counts as placed on its node from the moment the scheduler chose
// it, not only once the informer shows the binding. Without it two launcher Pods scheduled a few milliseconds
// apart both see the node's one GPU free in the lagging Pod cache and both get it, which a real cluster never
// does. Scheduling decisions are made one at a time, as kube-scheduler's single scheduling loop makes them: mu is
// held from choosing a node until the Pod is assumed on it (or forgotten), and guards pods.
type assumedPods struct {
	mu   sync.Mutex
	pods map[types.UID]assumedPod
}

type assumedPod struct {
	node     string
	requests map[string]int64
}

// add assumes the Pod uid on node, holding requests; a.mu must be held.
func (a *assumedPods) add(uid types.UID, node string, requests map[string]int64) {
	if a.pods == nil {
		a.pods = map[types.UID]assumedPod{}
	}
	a.pods[uid] = assumedPod{node: node, requests: requests}
}

// forget drops uid, as kube-scheduler's ForgetPod after a failed bind; a.mu must be held.
func (a *assumedPods) forget(uid types.UID) {
	delete(a.pods, uid)
}

// addTo adds to held what the assumed Pods on node hold that the cached Pods (cached: the Pod cache's launcher
// Pods) do not show yet, leaving out self. An assumed Pod the cache shows bound, or no longer has (deleted after
// it was assumed: it was in the cache when it was scheduled), is forgotten, as kube-scheduler's cache forgets it
// on the Pod's update or delete event. a.mu must be held.
func (a *assumedPods) addTo(held map[string]int64, node string, self types.UID, cached []*corev1.Pod) {
	inCache := make(map[types.UID]*corev1.Pod, len(cached))
	for _, p := range cached {
		inCache[p.UID] = p
	}
	for uid, ap := range a.pods {
		p, ok := inCache[uid]
		if !ok || p.Spec.NodeName != "" {
			delete(a.pods, uid)
			continue
		}
		if uid == self || ap.node != node {
			continue
		}
		for res, n := range ap.requests {
			held[res] += n
		}
	}
}
