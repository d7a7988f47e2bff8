package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// The dynamic client through the Client's Screen (screen_client.go): what it returns is screened, and the Secrets
// it sends and returns are held.

// screenedDynamic is dynamic.Interface through a Screen.
type screenedDynamic struct {
	next dynamic.Interface
	s    *Screen
}

func (d screenedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	next := d.next.Resource(gvr)
	secrets := gvr.GroupResource() == schema.GroupResource{Resource: "secrets"}
	return screenedNamespaceable{screenedResource{next, d.s, secrets}, next}
}

type screenedNamespaceable struct {
	screenedResource
	next dynamic.NamespaceableResourceInterface
}

func (r screenedNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return screenedResource{r.next.Namespace(ns), r.s, r.secrets}
}

// screenedResource is a resource of the dynamic client through a Screen; of Secrets, it holds their values.
type screenedResource struct {
	next    dynamic.ResourceInterface
	s       *Screen
	secrets bool
}

// sent holds the values of a Secret about to be sent.
func (r screenedResource) sent(obj *unstructured.Unstructured) {
	if r.secrets && obj != nil {
		r.s.holdSecret(obj.Object, true)
	}
}

// got screens what a call returned and holds the values of the Secrets in it.
func (r screenedResource) got(obj runtime.Object, err error) error {
	if err == nil && r.secrets {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			r.s.holdSecret(o.Object, false)
		case *unstructured.UnstructuredList:
			for i := range o.Items {
				r.s.holdSecret(o.Items[i].Object, false)
			}
		}
	}
	_, err = screened(r.s, obj, err)
	return err
}

func (r screenedResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Create(ctx, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Update(ctx, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.UpdateStatus(ctx, obj, opts)
	return out, r.got(out, err)
}

func (r screenedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	return r.s.Err(r.next.Delete(ctx, name, opts, sub...))
}

func (r screenedResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	return r.s.Err(r.next.DeleteCollection(ctx, opts, list))
}

func (r screenedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := r.next.Get(ctx, name, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	out, err := r.next.List(ctx, opts)
	return out, r.got(out, err)
}

func (r screenedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.next.Watch(ctx, opts)
	return r.s.watched(w, err, r.secrets)
}

// Patch sends no Secret the driver holds in full (the driver's patches of a Secret set its owner); what it returns
// is held.
func (r screenedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := r.next.Patch(ctx, name, pt, data, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Apply(ctx, name, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.ApplyStatus(ctx, name, obj, opts)
	return out, r.got(out, err)
}
