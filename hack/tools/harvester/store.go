package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
)

// The resources the validator's caches read (the twelve caches of virtualmachine.NewValidator), by the
// group, version and resource the API server serves them at, and their kinds.
var (
	namespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	pods           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pvcs           = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	resourceQuotas = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	storageClasses = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
	vms            = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	vmis           = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	vmims          = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancemigrations"}
	kubevirts      = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "kubevirts"}
	vmBackups      = schema.GroupVersionResource{Group: "harvesterhci.io", Version: "v1beta1", Resource: "virtualmachinebackups"}
	settings       = schema.GroupVersionResource{Group: "harvesterhci.io", Version: "v1beta1", Resource: "settings"}
	nads           = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	// Kube-OVN's Subnets, which the mutator reads when their CRD is served (newMutator).
	subnets = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}

	kinds = map[schema.GroupVersionResource]string{
		namespaces: "Namespace", pods: "Pod", pvcs: "PersistentVolumeClaim", resourceQuotas: "ResourceQuota",
		storageClasses: "StorageClass", vms: "VirtualMachine", vmis: "VirtualMachineInstance",
		vmims: "VirtualMachineInstanceMigration", kubevirts: "KubeVirt", vmBackups: "VirtualMachineBackup",
		settings: "Setting", nads: "NetworkAttachmentDefinition", subnets: "Subnet",
	}
)

// store is what the caches read: the cluster. namespace "" means every namespace (and is the only one of
// cluster-scoped resources). get answers a NotFound error for a missing object.
type store interface {
	get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error)
}

// liveStore reads the API server on every call, so each admission sees the cluster as it is at that moment
// (Harvester's own webhook reads informer caches, which lag a little behind). A resource the API server does
// not serve (no CRD installed, such as VirtualMachineBackup in the test bed) has no objects, as it would in an
// informer cache: a list is empty and a get is NotFound.
type liveStore struct {
	ctx    context.Context
	client dynamic.Interface
}

func (s liveStore) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return s.client.Resource(gvr).Namespace(namespace).Get(s.ctx, name, metav1.GetOptions{})
}

func (s liveStore) list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	l, err := s.client.Resource(gvr).Namespace(namespace).List(s.ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if apierrors.IsNotFound(err) {
		return nil, nil // the resource is not served
	}
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// memStore is a cluster held in memory: the objects of an admit file.
type memStore struct {
	mu   sync.Mutex
	objs map[schema.GroupVersionResource][]*unstructured.Unstructured
}

// resourceOf returns the resource of an object's kind, false when the validator reads no such kind.
func resourceOf(obj *unstructured.Unstructured) (schema.GroupVersionResource, bool) {
	gvk := obj.GroupVersionKind()
	for gvr, kind := range kinds {
		if gvr.GroupVersion() == gvk.GroupVersion() && kind == gvk.Kind {
			return gvr, true
		}
	}
	return schema.GroupVersionResource{}, false
}

// add puts an object in the store, in place of one of the same name; an object of a kind the validator does
// not read is an error.
func (s *memStore) add(obj *unstructured.Unstructured) error {
	gvr, ok := resourceOf(obj)
	if !ok {
		return fmt.Errorf("%s %s: the validator reads no objects of this kind", obj.GroupVersionKind(), obj.GetName())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objs == nil {
		s.objs = map[schema.GroupVersionResource][]*unstructured.Unstructured{}
	}
	s.objs[gvr] = slices.DeleteFunc(s.objs[gvr], func(o *unstructured.Unstructured) bool {
		return o.GetNamespace() == obj.GetNamespace() && o.GetName() == obj.GetName()
	})
	s.objs[gvr] = append(s.objs[gvr], obj.DeepCopy())
	return nil
}

func (s *memStore) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.objs[gvr], func(o *unstructured.Unstructured) bool {
		return o.GetNamespace() == namespace && o.GetName() == name
	})
	if i < 0 {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return s.objs[gvr][i].DeepCopy(), nil
}

func (s *memStore) list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []unstructured.Unstructured
	for _, o := range s.objs[gvr] {
		if (namespace == "" || o.GetNamespace() == namespace) && selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, *o.DeepCopy())
		}
	}
	return out, nil
}

// informedStore reads some resources from informers, as Harvester's own webhook reads all of them, and the rest
// live. Two kinds go through informers, because the validator looks at all of their objects on every
// VirtualMachine update (status updates included), which on Harvester is a lookup in memory:
//   - Pods: it asks through an index over all Pods whether the VM has one (pkg/util/resourcequota/calculator.go
//     getVMPods, PodByVMNameIndex);
//   - VirtualMachines: indexes over all VMs by PVC and by MAC address (pkg/util/virtualmachine, the MAC check of
//     validator.go).
//
// Read live, each admission listed every virt-launcher Pod and every VM of the cluster, and 100 machines removed at
// once timed the webhook out. An informer lags the cluster by a moment, as Harvester's do: a VM created an
// instant before may not be seen yet by the next admission (see e2e/admission TestHarvesterRefusesDuplicateMAC).
type informedStore struct {
	live     liveStore
	informed map[schema.GroupVersionResource]toolscache.GenericLister
}

// newInformedStore starts informers (through watchClient, whose requests have no timeout) on the resources
// informed, and waits until they have synced, at most informerSync; the rest is read live through client.
func newInformedStore(ctx context.Context, client, watchClient dynamic.Interface, informed ...schema.GroupVersionResource) (informedStore, error) {
	s := informedStore{live: liveStore{ctx: ctx, client: client}, informed: map[schema.GroupVersionResource]toolscache.GenericLister{}}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(watchClient, 0)
	for _, gvr := range informed {
		s.informed[gvr] = factory.ForResource(gvr).Lister()
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, informerSync)
	defer cancel()
	for gvr, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return s, fmt.Errorf("the %s informer did not sync within %s", gvr.Resource, informerSync)
		}
	}
	return s, nil
}

// informerSync bounds the informers' first list.
const informerSync = time.Minute

// lister is the informer's lister of gvr in namespace ("" for all, or a cluster-scoped resource), false when gvr
// is read live.
func (s informedStore) lister(gvr schema.GroupVersionResource, namespace string) (toolscache.GenericNamespaceLister, bool) {
	l, ok := s.informed[gvr]
	if !ok || namespace == "" {
		return l, ok
	}
	return l.ByNamespace(namespace), true
}

func (s informedStore) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	l, ok := s.lister(gvr, namespace)
	if !ok {
		return s.live.get(gvr, namespace, name)
	}
	obj, err := l.Get(name)
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.Unstructured).DeepCopy(), nil
}

func (s informedStore) list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	l, ok := s.lister(gvr, namespace)
	if !ok {
		return s.live.list(gvr, namespace, selector)
	}
	objs, err := l.List(selector)
	if err != nil {
		return nil, err
	}
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, *o.(*unstructured.Unstructured).DeepCopy())
	}
	return out, nil
}
