package controlplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// waitReady waits until kube-apiserver answers /readyz with 200.
func waitReady(ctx context.Context, p *process, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return pollReady(ctx, p, func(ctx context.Context) error {
		return cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	})
}

// waitControllers waits (by watch) until the serviceaccount controller has created default/default, proof that
// kube-controller-manager is connected and its informers are synced.
func waitControllers(ctx context.Context, p *process, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, 60*time.Second)
	defer cancel()
	go func() { // end the wait early if the process dies
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	sel := fields.OneTermEqualSelector("metadata.name", "default").String()
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "serviceaccounts", "default",
		func(o *metav1.ListOptions) { o.FieldSelector = sel })
	_, err = watchtools.UntilWithSync(ctx, lw, &corev1.ServiceAccount{}, nil, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Added || ev.Type == watch.Modified, nil
	})
	if done, perr := p.exited(); done {
		return fmt.Errorf("kube-controller-manager exited while starting (%v); see its log", perr)
	}
	if err != nil {
		return fmt.Errorf("waited for kube-controller-manager to create ServiceAccount default/default: %w", err)
	}
	return nil
}
