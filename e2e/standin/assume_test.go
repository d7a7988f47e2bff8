package standin

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Two launcher Pods that want the one GPU of the only node, scheduled one after the other while the Pod cache
// still shows neither bound (the informer lags the bind): the first is bound, the second is unschedulable for
// the GPU, as kube-scheduler's assume step makes it. When the first Pod leaves the cache the GPU is free again.
func TestAssumedPodHoldsItsDeviceUntilTheCacheShowsIt(t *testing.T) {
	const gpu = "nvidia.com/GA102GL_A10"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "harvester-node-0"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{gpu: resource.MustParse("1")}}}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
				Labels: map[string]string{kubevirtv1.AppLabel: "virt-launcher"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{gpu: resource.MustParse("1")}}}}},
		}
	}
	a, b := pod("virt-launcher-a"), pod("virt-launcher-b")
	kube := fake.NewClientset(node, a, b)
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, err := range []error{nodes.Add(node), pods.Add(a), pods.Add(b)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := &StandIn{kube: kube, nodes: corelisters.NewNodeLister(nodes), pods: corelisters.NewPodLister(pods)}
	ctx := context.Background()

	bound := func(p *corev1.Pod) (string, string) {
		t.Helper()
		got, err := kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := podCondition(got, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
			return got.Spec.NodeName, c.Message
		}
		return got.Spec.NodeName, ""
	}
	for _, p := range []*corev1.Pod{a, b} {
		if _, err := s.schedulePod(ctx, p, strings.TrimPrefix(p.Name, "virt-launcher-"), nil); err != nil {
			t.Fatalf("schedule %s: %v", p.Name, err)
		}
	}
	// The fake clientset's Bind is a create of pods/binding, which it records but does not apply to the Pod; the
	// action list is what the scheduler did.
	binds := func() []string {
		var names []string
		for _, act := range kube.Actions() {
			if act.GetVerb() == "create" && act.GetSubresource() == "binding" {
				names = append(names, act.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Binding).Name)
			}
		}
		return names
	}
	if got := binds(); len(got) != 1 || got[0] != a.Name {
		t.Fatalf("bound %v, want only %s", got, a.Name)
	}
	if _, msg := bound(b); !strings.Contains(msg, "1 Insufficient "+gpu) {
		t.Errorf("the second Pod is not unschedulable for the GPU: %q", msg)
	}

	// The first Pod is deleted before the cache ever showed it bound: the assumed GPU is released.
	if err := pods.Delete(a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.schedulePod(ctx, b, "b", nil); err != nil {
		t.Fatal(err)
	}
	if got := binds(); len(got) != 2 || got[1] != b.Name {
		t.Errorf("bound %v, want %s once the first Pod is gone", got, b.Name)
	}
}
