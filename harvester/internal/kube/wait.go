package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// WatchMachineAccess is what WatchMachine needs: it lists and watches the VM and the VMI.
var WatchMachineAccess = []Access{
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "list"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "watch"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachineinstances", Verb: "list"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachineinstances", Verb: "watch"},
}

// WatchMachine watches the VM and the VMI named name and calls check with the latest state of both, first once
// both are listed and then after every change, until check reports done or fails, or ctx ends. It returns the
// last state seen, also on failure, so the caller can say what it was waiting for and what it last saw.
//
// Each object is followed by a client-go informer: a list, then a watch from the list's resource version. A
// watch the server drops is resumed from the last version seen, and one that has expired (410 Gone) is
// replaced by a fresh list — no event is missed and nothing polls. An unreachable API server (restarting, say)
// is retried with backoff until ctx ends.
//
// With recheck > 0 check also runs again when that long passes without a change (for conditions on time).
func (c *Client) WatchMachine(ctx context.Context, ns, name string, recheck time.Duration, check MachineCheck) (Machine, error) {
	return c.watch(ctx, ns, name, true, recheck, check)
}

// WatchVM is WatchMachine for the VM alone: one list and one watch, and Machine.VMI is always nil. It is for a
// wait that the VM answers by itself, such as its deletion: deleted in the foreground, a VM goes only after its
// VMI, which KubeVirt's VM controller makes with a blocking controller reference to it
// (kubevirt.io/kubevirt v1.9.0 pkg/virt-controller/watch/vm/vm.go, setupVMIFromVM: metav1.NewControllerRef).
func (c *Client) WatchVM(ctx context.Context, ns, name string, check MachineCheck) (Machine, error) {
	return c.watch(ctx, ns, name, false, 0, check)
}

// watch is WatchMachine, following the VMI too when withVMI is set.
func (c *Client) watch(ctx context.Context, ns, name string, withVMI bool, recheck time.Duration, check MachineCheck) (Machine, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	w := &machineWatch{changed: make(chan struct{}, 1)}
	vms := c.kubevirt.VirtualMachines(ns)
	informers := []cache.Controller{w.informer(&kubevirtv1.VirtualMachine{}, listWatchByName(name, vms.List, vms.Watch),
		func(obj any) { w.last.VM, _ = obj.(*kubevirtv1.VirtualMachine) }, name)}
	if withVMI {
		vmis := c.kubevirt.VirtualMachineInstances(ns)
		informers = append(informers, w.informer(&kubevirtv1.VirtualMachineInstance{}, listWatchByName(name, vmis.List, vmis.Watch),
			func(obj any) { w.last.VMI, _ = obj.(*kubevirtv1.VirtualMachineInstance) }, name))
	}

	var running sync.WaitGroup
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
		running.Add(1)
		go func() { defer running.Done(); inf.RunWithContext(ctx) }()
	}
	defer func() { cancel(); running.Wait() }() // no informer outlives the call
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return w.current(), fmt.Errorf("could not list VM %s/%s: %w", ns, name, context.Cause(ctx))
	}
	for {
		m := w.current()
		done, err := check(m)
		if err != nil || done {
			return m, err
		}
		var tick <-chan time.Time
		var timer *time.Timer
		if recheck > 0 {
			timer = time.NewTimer(recheck)
			tick = timer.C
		}
		select {
		case <-w.changed:
		case <-tick:
		case <-ctx.Done():
			return w.current(), ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// listWatchByName lists and watches the objects named name through a client's List and Watch.
func listWatchByName[L runtime.Object](name string, list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	return listAndWatch{&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			// A consistent read: the reflector asks for resourceVersion "0", which the API server answers from its
			// watch cache — and under load that cache may not hold the VM this driver has just created.
			o.ResourceVersion, o.ResourceVersionMatch = "", ""
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return watchFn(ctx, o)
		},
	}}
}

// listAndWatch makes the informers list, then watch, instead of client-go's streaming "watch-list", which
// waits for an initial-events bookmark. Streaming pays off for large lists; these watch one object by name, and
// plain list+watch works with every API server Harvester has shipped (and with client-go's fakes).
type listAndWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported is read by client-go's reflector (util/watchlist).
func (listAndWatch) IsWatchListSemanticsUnSupported() bool { return true }

// machineWatch holds the latest VM and VMI the informers delivered.
type machineWatch struct {
	mu      sync.Mutex
	last    Machine
	changed chan struct{} // one pending notification is enough: the loop always reads the latest state
}

func (w *machineWatch) current() Machine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// informer returns an informer that stores the object named name with set (nil once it is deleted) and wakes
// the loop. Other objects are ignored: the field selector keeps them away on a real API server, but not every
// server (nor client-go's fakes) applies it.
func (w *machineWatch) informer(obj runtime.Object, lw cache.ListerWatcher, set func(any), name string) cache.Controller {
	apply := func(o any, gone bool) {
		if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = tomb.Obj
		}
		if m, err := meta.Accessor(o); err != nil || m.GetName() != name {
			return
		}
		w.mu.Lock()
		if gone {
			set(nil)
		} else {
			set(o)
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    obj,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { apply(o, false) },
			UpdateFunc: func(_, o any) { apply(o, false) },
			DeleteFunc: func(o any) { apply(o, true) },
		},
	})
	return ctrl
}

// WaitForSecretAccess is what WaitForSecret needs: it reads, lists and watches the Secret.
var WaitForSecretAccess = []Access{
	{Resource: "secrets", Verb: "get"},
	{Resource: "secrets", Verb: "list"},
	{Resource: "secrets", Verb: "watch"},
}

// WaitForSecret waits until the Secret named name exists and done says it is complete, and returns it. A read
// comes first, so an API failure is reported as what it is; then client-go's watch.UntilWithSync follows the
// Secret (list, then watch from the list's version, resumed when dropped) until done or ctx ends. The error is
// ctx's when the wait ran out.
func (c *Client) WaitForSecret(ctx context.Context, ns, name string, done func(*corev1.Secret) bool) (*corev1.Secret, error) {
	s, err := Get(ctx, c, Secrets, ns, name)
	switch {
	case err != nil:
		return nil, err
	case done(s):
		return s, nil
	}
	secrets := in(c, Secrets, ns)
	var found *corev1.Secret
	_, err = watchtools.UntilWithSync(ctx, listWatchByName(name, secrets.List, secrets.Watch), &unstructured.Unstructured{}, nil,
		func(ev watch.Event) (bool, error) {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted || u.GetName() != name {
				return false, nil
			}
			s, err := FromUnstructured[corev1.Secret](u)
			if err != nil || !done(s) {
				return false, nil
			}
			found = s
			return true, nil
		})
	if found != nil {
		return found, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, err
}

// Await follows the object of kind k named name in namespace ns and calls check with it (nil while it does not
// exist), first once it is listed and then after every change, until check reports done or fails, or ctx ends.
// client-go's watch.UntilWithSync lists it, then watches from the list's version, resuming a dropped watch and
// listing afresh after an expired one: nothing polls and no change is missed. It returns the last state seen, also
// on failure, so that the caller can say what it awaited and last saw; the error is ctx's when the wait ran out.
// It needs list and watch on the resource.
func Await[T any](ctx context.Context, c Interface, k Kind[T], ns, name string, check func(*T) (bool, error)) (*T, error) {
	res := in(c, k, ns)
	var last *T
	eval := func(u *unstructured.Unstructured) (bool, error) {
		last = nil
		if u != nil {
			obj, err := FromUnstructured[T](u)
			if err != nil {
				return false, err
			}
			last = obj
		}
		return check(last)
	}
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	listed := func(store cache.Store) (bool, error) {
		item, _, err := store.GetByKey(key)
		if err != nil {
			return false, err
		}
		u, _ := item.(*unstructured.Unstructured)
		return eval(u)
	}
	_, err := watchtools.UntilWithSync(ctx, listWatchByName(name, res.List, res.Watch), &unstructured.Unstructured{}, listed,
		func(ev watch.Event) (bool, error) {
			u, ok := ev.Object.(*unstructured.Unstructured)
			switch {
			case !ok || u.GetName() != name:
				return false, nil
			case ev.Type == watch.Deleted:
				return eval(nil)
			}
			return eval(u)
		})
	if err != nil && ctx.Err() != nil {
		return last, ctx.Err()
	}
	return last, err
}
