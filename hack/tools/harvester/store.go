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
	"k8s.io/client-go/informers"
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
	liveReads.Add(gvr.Resource, 1)
	return s.client.Resource(gvr).Namespace(namespace).Get(s.ctx, name, metav1.GetOptions{})
}

func (s liveStore) list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	liveReads.Add(gvr.Resource, 1)
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
// live. Eight kinds go through informers. Two because the validator looks at all of their objects on every
// VirtualMachine update (status updates included), which on Harvester is a lookup in memory:
//   - Pods: it asks through an index over all Pods whether the VM has one (pkg/util/resourcequota/calculator.go
//     getVMPods, PodByVMNameIndex);
//   - VirtualMachines: indexes over all VMs by PVC and by MAC address (pkg/util/virtualmachine, the MAC check of
//     validator.go).
//
// Read live, each admission listed every virt-launcher Pod and every VM of the cluster, and 100 machines removed at
// once timed the webhook out. Their indexes are the informers' too (index.go), filled as objects arrive: scanned
// on each lookup, every VM and Pod converted to its type on every admission, the work of each admission grew
// with the number of VMs, and of 200 machines removed at once every removal timed the webhook out.
//
// And what the mutator reads on every VirtualMachine create: Settings (overcommit-config,
// additional-guest-memory-overhead-ratio, default-vm-termination-grace-period-seconds), the KubeVirt resource (the
// default architecture) and the NetworkAttachmentDefinition of each VM network (its cluster network): custom
// resources, whose reads cost the API server more than others (the KubeVirt resource's schema is large), and with
// 200 machines created at once some of those reads outlasted the tool's bound of 5 s, so that the mutator refused
// 4 to 14 of the 200 creates ("Get …/settings/overcommit-config?timeout=5s: context deadline exceeded"), and 1 of
// 200 on its one read left, of the network. Tests change a Setting only through e2e/scenarios setOvercommit, which
// waits until "held" (vars.go) shows it.
//
// And what the validator reads on every admission: the namespace (Rancher's quota annotation), the VM's PVCs and
// their storage classes. With the rest held, those reads still timed 3 of 200 creates out at once; tests change a
// namespace only through e2e/scenarios annotateNamespace or as e2e/admission's quota test does, which wait until
// "held" shows it, and change no PVC or storage class a VM then uses.
//
// An object of a network, namespace, PVC or storage class the informer does not hold is read live (missLive): a VM
// on a network, in a namespace or with a PVC made an instant before is judged as before, where Harvester's informer
// might not know it yet. A read the API server does not answer leaves the informer's answer, NotFound.
//
// An informer lags the cluster by a moment, as Harvester's do: a VM created an
// instant before may not be seen yet by the next admission (see e2e/admission TestHarvesterRefusesDuplicateMAC).
type informedStore struct {
	live     liveStore
	informed map[schema.GroupVersionResource]informers.GenericInformer
	// missLive names the informed resources an object of which the informer does not hold (yet) is read live.
	missLive map[schema.GroupVersionResource]bool
}

// newInformedStore starts informers (through watchClient, whose requests have no timeout) on the resources
// informed and missLive, and waits until they have synced, at most informerSync; the rest is read live through
// client, and so is an object of a missLive resource the informer does not hold.
func newInformedStore(ctx context.Context, client, watchClient dynamic.Interface, informed []schema.GroupVersionResource, missLive ...schema.GroupVersionResource) (informedStore, error) {
	s := informedStore{live: liveStore{ctx: ctx, client: client}, informed: map[schema.GroupVersionResource]informers.GenericInformer{},
		missLive: map[schema.GroupVersionResource]bool{}}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(watchClient, 0)
	for _, gvr := range informed {
		s.informed[gvr] = factory.ForResource(gvr)
	}
	for _, gvr := range missLive {
		s.informed[gvr] = factory.ForResource(gvr)
		s.missLive[gvr] = true
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
	i, ok := s.informed[gvr]
	if !ok {
		return nil, false
	}
	if namespace == "" {
		return i.Lister(), true
	}
	return i.Lister().ByNamespace(namespace), true
}

func (s informedStore) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	l, ok := s.lister(gvr, namespace)
	if !ok {
		return s.live.get(gvr, namespace, name)
	}
	obj, err := l.Get(name)
	if apierrors.IsNotFound(err) && s.missLive[gvr] {
		// Made an instant before, perhaps. A read the API server does not answer (busy, it outlasted the bound)
		// leaves the informer's answer, Harvester's own.
		if live, liveErr := s.live.get(gvr, namespace, name); liveErr == nil {
			return live, nil
		}
		return nil, err
	}
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
	return copies(objs), nil
}
