package main

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rancher/wrangler/v3/pkg/generic"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object is a pointer to an API type E, as wrangler's caches hand them out.
type object[E any] interface {
	*E
	runtime.Object
}

// cache is a wrangler cache (generic.CacheInterface, what Harvester's generated XxxCache interfaces are) of one
// resource, read from a store on every call. Indexers work as in an informer's indexer. Of a resource the store
// holds in an informer (indexedStore), each object is filed under its keys as it arrives and GetByIndex reads the
// objects filed under one key, as on Harvester; of the others, GetByIndex applies the index function to every
// object of the resource and returns those it files under the key.
type cache[E any, T object[E]] struct {
	store store
	gvr   schema.GroupVersionResource

	mu       sync.Mutex
	indexers map[string]generic.Indexer[T]
	// indexed names the indexes the store keeps (indexedStore).
	indexed map[string]bool
}

func newCache[E any, T object[E]](s store, gvr schema.GroupVersionResource) *cache[E, T] {
	return &cache[E, T]{store: s, gvr: gvr, indexers: map[string]generic.Indexer[T]{}, indexed: map[string]bool{}}
}

// Get returns the object namespace/name, or a NotFound error.
func (c *cache[E, T]) Get(namespace, name string) (T, error) {
	u, err := c.store.get(c.gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	return c.typed(u)
}

// List returns the objects in namespace ("" for all) whose labels match selector.
func (c *cache[E, T]) List(namespace string, selector labels.Selector) ([]T, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	return c.typedAll(c.store.list(c.gvr, namespace, selector))
}

// AddIndexer registers an index function under a name, as Harvester's webhook does on its informers
// (pkg/webhook/indexeres RegisterIndexers). When the store holds the resource in an informer, the informer keeps
// the index: an object that does not convert to the resource's type is filed under no key, as a typed informer
// would not hold it.
func (c *cache[E, T]) AddIndexer(name string, indexer generic.Indexer[T]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexers[name] = indexer
	s, ok := c.store.(indexedStore)
	if !ok {
		return
	}
	indexed, err := s.addIndex(c.gvr, name, func(u *unstructured.Unstructured) ([]string, error) {
		obj, err := c.typed(u)
		if err != nil {
			return nil, nil
		}
		return indexer(obj)
	})
	if err != nil {
		// wrangler's AddIndexer has no error to return either; it panics when the informer has stopped.
		panic(fmt.Sprintf("index %s of %s: %v", name, c.gvr.Resource, err))
	}
	c.indexed[name] = indexed
}

// GetByIndex returns the objects of every namespace that the index function files under key. An index never
// registered is an error, as in client-go's indexer.
func (c *cache[E, T]) GetByIndex(name, key string) ([]T, error) {
	c.mu.Lock()
	indexer, indexed := c.indexers[name], c.indexed[name]
	c.mu.Unlock()
	if indexer == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", name) // client-go's cache.ByIndex message
	}
	indexLookups.Add(c.gvr.Resource, 1)
	if indexed {
		found, err := c.byIndex(name, key)
		indexExamined.Add(c.gvr.Resource, int64(len(found)))
		return found, err
	}
	all, err := c.List("", labels.Everything())
	if err != nil {
		return nil, err
	}
	indexExamined.Add(c.gvr.Resource, int64(len(all)))
	var out []T
	for _, obj := range all {
		keys, err := indexer(obj)
		if err != nil {
			return nil, fmt.Errorf("index %s of %s: %w", name, c.gvr.Resource, err)
		}
		if slices.Contains(keys, key) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// byIndex reads the objects the store's index name files under key.
func (c *cache[E, T]) byIndex(name, key string) ([]T, error) {
	return c.typedAll(c.store.(indexedStore).byIndex(c.gvr, name, key))
}

// typedAll converts what a store read returned, or passes its error on.
func (c *cache[E, T]) typedAll(items []unstructured.Unstructured, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for i := range items {
		obj, err := c.typed(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func (c *cache[E, T]) typed(u *unstructured.Unstructured) (T, error) {
	obj := T(new(E))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", c.gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return obj, nil
}

// clusterCache is a cache of a cluster-scoped resource (generic.NonNamespacedCacheInterface).
type clusterCache[E any, T object[E]] struct{ c *cache[E, T] }

func newClusterCache[E any, T object[E]](s store, gvr schema.GroupVersionResource) clusterCache[E, T] {
	return clusterCache[E, T]{c: newCache[E, T](s, gvr)}
}

// Get returns the object name, or a NotFound error.
func (c clusterCache[E, T]) Get(name string) (T, error) { return c.c.Get("", name) }

// List returns the objects whose labels match selector.
func (c clusterCache[E, T]) List(selector labels.Selector) ([]T, error) {
	return c.c.List("", selector)
}

// AddIndexer registers an index function under a name.
func (c clusterCache[E, T]) AddIndexer(name string, indexer generic.Indexer[T]) {
	c.c.AddIndexer(name, indexer)
}

// GetByIndex returns the objects that the index function files under key.
func (c clusterCache[E, T]) GetByIndex(name, key string) ([]T, error) {
	return c.c.GetByIndex(name, key)
}
