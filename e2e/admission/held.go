package admission

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// The resources whose objects the Harvester tool publishes as held, for AwaitHeld.
var (
	Settings   = schema.GroupVersionResource{Group: "harvesterhci.io", Version: "v1beta1", Resource: "settings"}
	KubeVirts  = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "kubevirts"}
	Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	PVCs       = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

// AwaitHeld waits until the Harvester tool's informers hold the object namespace/name ("" namespace: a
// cluster-scoped one) of gvr as the API server has it now, at the resourceVersion a read through client gives.
// The tool reads Settings, the KubeVirt resource and Namespaces (with more) from informers, as Harvester's webhook
// does (hack/tools/harvester store.go), and an informer has a change a moment after the API server: a test that
// changes one waits here before it makes or changes a VM.
func (w *Webhook) AwaitHeld(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string) error {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	var want string
	var held map[string]map[string]string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want = obj.GetResourceVersion()
		if err := w.Var(ctx, "held", &held); err != nil {
			return false, err
		}
		return held[gvr.Resource][key] == want, nil
	})
	if err != nil {
		return fmt.Errorf("Harvester's webhook does not hold %s %s at resourceVersion %s (it holds %q): %w", gvr.Resource, key, want, held[gvr.Resource][key], err)
	}
	return nil
}
