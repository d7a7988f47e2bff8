// Package standin imitates, in-process, the controllers around a VirtualMachine that the test bed cannot run
// from upstream code, to the extent the node driver relies on them and nothing more. KubeVirt's own
// VirtualMachine controller runs beside it (package virtcontroller): it creates and deletes VMIs for the
// runStrategy and writes the VM's status; the stand-in plays
//
//   - Harvester's VM controller: its finalizer on VMs, PVCs from the harvesterhci.io/volumeClaimTemplates
//     annotation (not owned by the VM), and on deletion the PVCs named in
//     harvesterhci.io/removedPersistentVolumeClaims; the node-topology annotations on VMIs of VMs the node driver
//     created.
//   - kube-scheduler and kubelet for the virt-launcher Pods KubeVirt's own VMI controller (run beside it too)
//     makes: a Pod bound to a node that fits (or the scheduler's Unschedulable message), running with an IP,
//     ended when its VMI is final (launcherpod.go); virt-handler's device plugins in the nodes' capacity.
//   - virt-handler: the VMI's phase from Scheduled to Running, guest-agent interfaces and conditions, the guest's
//     shutdown when the VMI is deleted.
//   - a storage provisioner: PVCs of an existing storage class become Bound.
//   - Kube-OVN's controller, for a NIC on an overlay network: an address of the network's Subnet when it has DHCP
//     on, none without such a Subnet (kubeovn.go).
//
// There is never a container or a virt-launcher process. Guests are simulated, with latencies imitated by small
// delays (Options) and failures injected with annotations (AnnotationInject), or, for VMs annotated
// AnnotationGuest, real Linux guests under qemu (realguest.go). Garbage collection of the VMI and of VM-owned
// Secrets is left to the real kube-controller-manager.
package standin

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubevirt"
)

// StandIn is the running set of stand-in controllers.
type StandIn struct {
	opts  Options
	calls *callCounter

	kube kubernetes.Interface
	virt kubevirt.Interface
	dyn  dynamic.Interface

	vms        cache.SharedIndexInformer
	vmis       cache.SharedIndexInformer
	pvcs       corelisters.PersistentVolumeClaimLister
	pods       corelisters.PodLister // virt-launcher Pods
	nodes      corelisters.NodeLister
	namespaces corelisters.NamespaceLister
	classes    storagelisters.StorageClassLister

	queue workqueue.TypedRateLimitingInterface[key]

	assumed assumedPods // the scheduler's Pods placed but not yet shown bound by the Pod cache

	mu     sync.Mutex
	clocks map[types.UID]map[string]time.Time // per object, when each stage was first seen

	guests realGuests
	ovn    kubeOVN // Kube-OVN's networks and Subnets (kubeovn.go)

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// key names what a worker reconciles: a VirtualMachine (with its VMI), a PersistentVolumeClaim, a
// virt-launcher Pod or a Node (name only).
type key struct {
	pvc, pod, node  bool
	namespace, name string
}

// Start connects to the cluster cfg points at, waits until its caches are synced and starts the workers. ctx
// bounds the start-up only: the stand-in runs until Stop.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*StandIn, error) {
	s := &StandIn{opts: opts.withDefaults(), calls: newCallCounter(), clocks: map[types.UID]map[string]time.Time{},
		guests: realGuests{running: map[types.UID]*runningGuest{}, disks: map[string]string{}}}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "e2e-standin"
	cfg.Wrap(s.calls.wrap)
	var err error
	if s.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.virt, err = kubevirt.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	startup := ctx
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))

	vmAPI, vmiAPI := s.virt.KubevirtV1().VirtualMachines(""), s.virt.KubevirtV1().VirtualMachineInstances("")
	s.vms = newInformer(&kubevirtv1.VirtualMachine{}, vmAPI.List, vmAPI.Watch)
	s.vmis = newInformer(&kubevirtv1.VirtualMachineInstance{}, vmiAPI.List, vmiAPI.Watch)
	factory := informers.NewSharedInformerFactory(s.kube, 0)
	s.pvcs = factory.Core().V1().PersistentVolumeClaims().Lister()
	s.nodes = factory.Core().V1().Nodes().Lister()
	s.namespaces = factory.Core().V1().Namespaces().Lister()
	s.classes = factory.Storage().V1().StorageClasses().Lister()
	pvcInformer := factory.Core().V1().PersistentVolumeClaims().Informer()

	s.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[key](20*time.Millisecond, 2*time.Second),
		workqueue.TypedRateLimitingQueueConfig[key]{Name: "standin"})
	enqueueVM := func(obj any) {
		if m, ok := metaOf(obj); ok {
			s.queue.Add(key{namespace: m.GetNamespace(), name: m.GetName()})
		}
	}
	// A VMI is always named after its VM.
	handler := cache.ResourceEventHandlerFuncs{AddFunc: enqueueVM, UpdateFunc: func(_, o any) { enqueueVM(o) }, DeleteFunc: enqueueVM}
	if _, err := s.vms.AddEventHandler(handler); err != nil {
		return nil, err
	}
	if _, err := s.vmis.AddEventHandler(handler); err != nil {
		return nil, err
	}
	enqueuePVC := func(obj any) {
		if m, ok := metaOf(obj); ok {
			s.queue.Add(key{pvc: true, namespace: m.GetNamespace(), name: m.GetName()})
		}
	}
	if _, err := pvcInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueuePVC, UpdateFunc: func(_, o any) { enqueuePVC(o) }, DeleteFunc: enqueuePVC,
	}); err != nil {
		return nil, err
	}

	if err := s.registerDevicePlugins(startup); err != nil {
		s.cancel()
		return nil, err
	}
	// Nodes added later get them too (a Pod would not fit a node without them).
	enqueueNode := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && !hasDevicePlugins(n) {
			s.queue.Add(key{node: true, name: n.Name})
		}
	}
	if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueNode, UpdateFunc: func(_, o any) { enqueueNode(o) },
	}); err != nil {
		return nil, err
	}
	podFactory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = launcherSelector.String() }))
	s.pods = podFactory.Core().V1().Pods().Lister()
	enqueuePod := func(obj any) {
		if m, ok := metaOf(obj); ok {
			s.queue.Add(key{pod: true, namespace: m.GetNamespace(), name: m.GetName()})
		}
	}
	if _, err := podFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueuePod, UpdateFunc: func(_, o any) { enqueuePod(o) }, DeleteFunc: enqueuePod,
	}); err != nil {
		return nil, err
	}
	// A VMI that ends or goes away ends its launcher Pods.
	enqueueVMIPods := func(obj any) {
		if m, ok := metaOf(obj); ok {
			for _, name := range s.launcherPodsOf(m) {
				s.queue.Add(key{pod: true, namespace: m.GetNamespace(), name: name})
			}
		}
	}
	if _, err := s.vmis.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) { enqueueVMIPods(o) }, DeleteFunc: enqueueVMIPods,
	}); err != nil {
		return nil, err
	}

	for _, inf := range []cache.SharedIndexInformer{s.vms, s.vmis} {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			inf.RunWithContext(ctx)
		}()
	}
	factory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	s.wg.Add(1)
	go func() { // informers and the factory end with ctx; the queue must be shut down for the workers to end
		defer s.wg.Done()
		<-ctx.Done()
		s.queue.ShutDown()
		factory.Shutdown()
		podFactory.Shutdown()
	}()
	synced := []cache.InformerSynced{s.vms.HasSynced, s.vmis.HasSynced}
	for _, ok := range factory.WaitForCacheSync(startup.Done()) {
		if !ok {
			s.Stop()
			return nil, fmt.Errorf("stand-in: informer caches did not sync: %w", startup.Err())
		}
	}
	for _, ok := range podFactory.WaitForCacheSync(startup.Done()) {
		if !ok {
			s.Stop()
			return nil, fmt.Errorf("stand-in: pod cache did not sync: %w", startup.Err())
		}
	}
	if !cache.WaitForCacheSync(startup.Done(), synced...) {
		s.Stop()
		return nil, fmt.Errorf("stand-in: VM/VMI caches did not sync: %w", startup.Err())
	}
	if err := s.startKubeOVN(ctx, startup); err != nil {
		s.Stop()
		return nil, err
	}
	for range s.opts.Workers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for s.processNext(ctx) {
			}
		}()
	}
	return s, nil
}

// Stop ends the stand-in and waits for its workers. Objects stay as they are: VMs no longer progress. Real guests
// are killed and their files removed.
func (s *StandIn) Stop() {
	s.cancel()
	s.wg.Wait()
	s.guests.shutdown()
}

// Calls returns how many API requests the stand-in has made, by "VERB resource[/subresource]"
// (e.g. "PUT virtualmachines/status", "WATCH persistentvolumeclaims").
func (s *StandIn) Calls() map[string]int { return s.calls.snapshot() }

func (s *StandIn) processNext(ctx context.Context) bool {
	k, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(k)
	var after time.Duration
	var err error
	switch {
	case k.pvc:
		after, err = s.syncPVC(ctx, k.namespace, k.name)
	case k.pod:
		after, err = s.syncPod(ctx, k.namespace, k.name)
	case k.node:
		err = s.syncNode(ctx, k.name)
	default:
		after, err = s.syncVM(ctx, k.namespace, k.name)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// shutting down
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// its namespace is going away; the deletion brings the object back to the queue
	case err != nil:
		if !apierrors.IsConflict(err) { // conflicts are routine: someone else updated the object first
			s.opts.Logf("standin: %s %s/%s: %v (retrying)", kind(k), k.namespace, k.name, err)
		}
		s.queue.AddRateLimited(k)
	default:
		s.queue.Forget(k)
		if after > 0 {
			s.queue.AddAfter(k, after)
		}
	}
	return true
}

// elapsed returns how long ago stage of the object uid was first seen, recording now if it was not yet.
// The stand-in's delays count from there; the API's own timestamps have only second resolution.
func (s *StandIn) elapsed(uid types.UID, stage string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	stages := s.clocks[uid]
	if stages == nil {
		stages = map[string]time.Time{}
		s.clocks[uid] = stages
	}
	t, ok := stages[stage]
	if !ok {
		t = time.Now()
		stages[stage] = t
	}
	return time.Since(t)
}

// forget drops the clocks of an object that is gone.
func (s *StandIn) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.clocks, uid)
	s.mu.Unlock()
}

func newInformer[L runtime.Object](obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return list(ctx, o) },
		WatchFuncWithContext: watchFn,
	}
	return cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func metaOf(obj any) (metav1.Object, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}

func kind(k key) string {
	switch {
	case k.pvc:
		return "pvc"
	case k.pod:
		return "pod"
	case k.node:
		return "node"
	}
	return "vm"
}
