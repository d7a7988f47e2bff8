// Package await waits for API state by watching it: a list, then a watch from the list's resourceVersion
// (client-go's UntilWithSync), so no change is missed between the two and nothing sleeps.
package await

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// ByName returns a ListerWatcher for the one object called name, from a typed client's List and Watch methods,
// e.g. ByName("vm1", kv.KubevirtV1().VirtualMachines(ns).List, kv.KubevirtV1().VirtualMachines(ns).Watch).
func ByName[L runtime.Object](name string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchFn(ctx, o)
		},
	}
}

// Object watches the single object lw serves until cond holds, and returns the object as last seen (the zero T
// when it is absent). cond is called with exists=false while there is no object, so "until deleted" is
// cond = func(_ T, exists bool) bool { return !exists }.
//
// What names the awaited state for the error message; describe (may be nil) summarises the last object seen,
// so a timeout reads "waited for <what>: context deadline exceeded; last seen: <summary>".
func Object[T runtime.Object](ctx context.Context, lw cache.ListerWatcher, what string,
	cond func(obj T, exists bool) bool, describe func(T) string,
) (T, error) {
	var zero, last T
	seen, exists := false, false
	check := func(obj T, ok bool) bool {
		last, exists, seen = obj, ok, true
		return cond(obj, ok)
	}
	pre := func(store cache.Store) (bool, error) {
		items := store.List()
		switch len(items) {
		case 0:
			return check(zero, false), nil
		case 1:
			obj, ok := items[0].(T)
			if !ok {
				return false, fmt.Errorf("await %s: listed a %T", what, items[0])
			}
			return check(obj, true), nil
		default:
			return false, fmt.Errorf("await %s: the list matched %d objects, want at most one", what, len(items))
		}
	}
	onEvent := func(ev watch.Event) (bool, error) {
		switch ev.Type {
		case watch.Deleted:
			return check(zero, false), nil
		case watch.Added, watch.Modified:
			obj, ok := ev.Object.(T)
			if !ok {
				return false, fmt.Errorf("await %s: watch sent a %T", what, ev.Object)
			}
			return check(obj, true), nil
		}
		return false, nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, newOf[T](), pre, onEvent)
	if err == nil {
		return last, nil
	}
	if errors.Is(err, watchtools.ErrWatchClosed) || ctx.Err() != nil {
		err = ctx.Err()
	}
	state := "nothing seen"
	switch {
	case seen && !exists:
		state = "absent"
	case seen && describe != nil:
		state = describe(last)
	case seen:
		state = fmt.Sprintf("%+v", last)
	}
	return last, fmt.Errorf("waited for %s: %w; last seen: %s", what, err, state)
}

// newOf returns a new empty T for the informer's type check (T is a pointer type such as *corev1.Secret).
func newOf[T runtime.Object]() runtime.Object {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(runtime.Object)
}
