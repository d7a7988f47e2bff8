package repo

import (
	"context"
	"errors"
	"sync"
)

// onceByKey runs a slow lookup (a tool build, a module download) at most once per key in this process and
// remembers its result, error included.
type onceByKey[T any] struct{ results sync.Map } // key -> *onceResult[T]

type onceResult[T any] struct {
	once sync.Once
	v    T
	err  error
}

// do returns f's result for key, running f on the first call only. A deadline on ctx never cuts f short, only a
// cancellation does (an interrupt, say): callers bound the start-up of what they run with the result, and a
// first build or download must not count against that bound.
func (o *onceByKey[T]) do(ctx context.Context, key string, f func(context.Context) (T, error)) (T, error) {
	v, _ := o.results.LoadOrStore(key, &onceResult[T]{})
	r := v.(*onceResult[T])
	r.once.Do(func() {
		fctx, stop := withoutDeadline(ctx)
		defer stop()
		r.v, r.err = f(fctx)
	})
	return r.v, r.err
}

// withoutDeadline returns a context that ends when parent is cancelled but not when parent's deadline passes.
func withoutDeadline(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() {
		if errors.Is(parent.Err(), context.Canceled) {
			cancel()
		}
	})
	return ctx, func() { stop(); cancel() }
}
