package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// indexedStore is a store that holds some resources in informers and can index them there, as Harvester's
// webhook indexes its informers (pkg/webhook/indexeres RegisterIndexers on wrangler's caches, which are
// client-go's indexers): each object is filed under its keys once, when it arrives, and a lookup reads the
// objects filed under one key.
type indexedStore interface {
	store
	// addIndex files every object of gvr, from now on and those already held, under the keys fn gives it;
	// false when gvr is not held in an informer (it is read live, and cannot be indexed).
	addIndex(gvr schema.GroupVersionResource, name string, fn func(*unstructured.Unstructured) ([]string, error)) (bool, error)
	// byIndex returns copies of the objects of gvr filed under key by the index name.
	byIndex(gvr schema.GroupVersionResource, name, key string) ([]unstructured.Unstructured, error)
}

func (s informedStore) addIndex(gvr schema.GroupVersionResource, name string, fn func(*unstructured.Unstructured) ([]string, error)) (bool, error) {
	i, ok := s.informed[gvr]
	if !ok {
		return false, nil
	}
	// client-go indexes the objects already held as well (threadSafeMap.AddIndexers).
	return true, i.Informer().AddIndexers(toolscache.Indexers{name: func(obj any) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("index %s of %s: %T is not an unstructured object", name, gvr.Resource, obj)
		}
		return fn(u)
	}})
}

func (s informedStore) byIndex(gvr schema.GroupVersionResource, name, key string) ([]unstructured.Unstructured, error) {
	i, ok := s.informed[gvr]
	if !ok {
		return nil, fmt.Errorf("%s are not held in an informer, and have no index %s", gvr.Resource, name)
	}
	objs, err := i.Informer().GetIndexer().ByIndex(name, key)
	if err != nil {
		return nil, err
	}
	return copies(objs), nil
}

// copies are deep copies of an informer's objects, which its cache holds and no reader may change.
func copies[T any](objs []T) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, *any(o).(*unstructured.Unstructured).DeepCopy())
	}
	return out
}
