// Package apply server-side-applies manifests of any kind, so seeding the test bed is idempotent.
package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side-apply manager name of everything the test bed seeds.
const FieldManager = "dmdh-e2e"

// Decode splits a multi-document YAML or JSON stream into objects, skipping empty documents.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// Applier server-side-applies objects, finding each kind's resource through discovery.
type Applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// New returns an Applier for the cluster cfg points at.
func New(cfg *rest.Config) (*Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// Apply server-side-applies obj (force: the test bed owns what it seeds) and returns the object as stored.
// Status is part of obj for kinds without a status subresource (Harvester's CRDs); for kinds with one, use
// ApplyStatus afterwards.
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return a.apply(ctx, obj, false)
}

// ApplyStatus server-side-applies obj's status through the status subresource.
func (a *Applier) ApplyStatus(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return a.apply(ctx, obj, true)
}

func (a *Applier) apply(ctx context.Context, obj *unstructured.Unstructured, status bool) (*unstructured.Unstructured, error) {
	ri, err := a.resource(obj)
	if err != nil {
		return nil, err
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	what := "apply"
	var out *unstructured.Unstructured
	if status {
		what = "apply status of"
		out, err = ri.ApplyStatus(ctx, obj.GetName(), obj, opts)
	} else {
		out, err = ri.Apply(ctx, obj.GetName(), obj, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", what, obj.GetKind(), key(obj), err)
	}
	return out, nil
}

// ApplyTyped converts a typed object (its TypeMeta set) and applies it.
func (a *Applier) ApplyTyped(ctx context.Context, obj runtime.Object) (*unstructured.Unstructured, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return a.Apply(ctx, &unstructured.Unstructured{Object: u})
}

// resource finds obj's REST resource. A kind unknown to the cached discovery (a CRD installed a moment ago)
// resets the cache once.
func (a *Applier) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("find the resource of %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		return a.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

func key(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
