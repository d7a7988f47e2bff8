package crds

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// WaitEstablished watches CustomResourceDefinitions until each named one has condition Established=True
// (default deadline 60 s). The error names the CRDs still pending and their last conditions.
func WaitEstablished(ctx context.Context, cfg *rest.Config, names ...string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, 60*time.Second)
	defer cancel()
	pending := map[string]string{} // name -> last conditions seen
	for _, n := range names {
		pending[n] = "not seen"
	}
	see := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if _, wanted := pending[u.GetName()]; !wanted {
			return
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var summary []string
		for _, c := range conds {
			m, _ := c.(map[string]any)
			summary = append(summary, fmt.Sprintf("%v=%v", m["type"], m["status"]))
			if m["type"] == "Established" && m["status"] == "True" {
				delete(pending, u.GetName())
				return
			}
		}
		pending[u.GetName()] = "conditions " + strings.Join(summary, ",")
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return dyn.Resource(crdResource).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return dyn.Resource(crdResource).Watch(ctx, o)
		},
	}
	_, err = watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{},
		func(store cache.Store) (bool, error) {
			for _, obj := range store.List() {
				see(obj)
			}
			return len(pending) == 0, nil
		},
		func(ev watch.Event) (bool, error) {
			see(ev.Object)
			return len(pending) == 0, nil
		})
	if err != nil {
		var left []string
		for n, s := range pending {
			left = append(left, n+" ("+s+")")
		}
		sort.Strings(left)
		return fmt.Errorf("waited for CRDs to be Established: %w; still pending: %s", err, strings.Join(left, "; "))
	}
	return nil
}
