package main

import (
	"expvar"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What the webhook serves at /debug/vars (Go's expvar), for the tests (e2e/admission Webhook.Var):
//   - indexLookups and indexExamined: the caches' index lookups and the objects they examined, by resource: a
//     lookup in an informer's index examines the objects filed under its key, a scan every object of the resource
//     (TestHarvesterIndexLookups);
//   - liveReads: the reads of the API server the caches made, by resource: the resources not held in informers
//     (TestHarvesterWebhookReads);
//   - held: see publishHeld.
var (
	indexLookups  = expvar.NewMap("indexLookups")
	indexExamined = expvar.NewMap("indexExamined")
	liveReads     = expvar.NewMap("liveReads")
)

// publishHeld serves at /debug/vars, as "held", the resourceVersion of each object the store's informers hold of
// the resources gvrs (by resource, then "namespace/name" or the name of a cluster-scoped object): a test that
// changes one of these objects waits until the webhook holds the change before it goes on (e2e/scenarios
// setOvercommit), as an informer has it a moment after the API server. Only resources of a few hundred objects at most.
func (s informedStore) publishHeld(gvrs ...schema.GroupVersionResource) {
	expvar.Publish("held", expvar.Func(func() any {
		out := map[string]map[string]string{}
		for _, gvr := range gvrs {
			held := map[string]string{}
			if i, ok := s.informed[gvr]; ok {
				for _, o := range i.Informer().GetStore().List() {
					if u, ok := o.(*unstructured.Unstructured); ok {
						key := u.GetName()
						if ns := u.GetNamespace(); ns != "" {
							key = ns + "/" + key
						}
						held[key] = u.GetResourceVersion()
					}
				}
			}
			out[gvr.Resource] = held
		}
		return out
	}))
}
