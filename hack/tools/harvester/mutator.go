package main

import (
	"net/http"
	"reflect"

	cniv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	kubeovnv1 "github.com/kubeovn/kube-ovn/pkg/apis/kubeovn/v1"
	"github.com/rancher/wrangler/v3/pkg/webhook"
	kubevirtv1 "kubevirt.io/api/core/v1"

	harvesterv1 "github.com/harvester/harvester/pkg/apis/harvesterhci.io/v1beta1"
	ctlkubeovnv1 "github.com/harvester/harvester/pkg/generated/controllers/kubeovn.io/v1"
	"github.com/harvester/harvester/pkg/webhook/resources/virtualmachine"
	"github.com/harvester/harvester/pkg/webhook/types"
)

// mutationPath is where Harvester's webhook server serves mutation (pkg/webhook/server/server.go, mutationPath).
const mutationPath = "/v1/webhook/mutation"

// newMutator returns Harvester's VirtualMachine mutator with its caches reading s, as Harvester's webhook server
// builds it (pkg/webhook/server/mutation.go Mutation: the Setting, NetworkAttachmentDefinition and KubeVirt
// caches, and a Kube-OVN Subnet cache only when subnetsServed, the CRD subnets.kubeovn.io existing when the server
// started; without it the mutator leaves interface bindings alone, with it an interface on an overlay network
// whose Subnet has DHCP on gets KubeVirt's managedtap binding in place of bridge: patchManagedTapBinding).
func newMutator(s store, subnetsServed bool) types.Mutator {
	var subnetCache ctlkubeovnv1.SubnetCache
	if subnetsServed {
		subnetCache = newCache[kubeovnv1.Subnet](s, subnets)
	}
	return virtualmachine.NewMutator(
		newClusterCache[harvesterv1.Setting](s, settings),
		newCache[cniv1.NetworkAttachmentDefinition](s, nads),
		newCache[kubevirtv1.KubeVirt](s, kubevirts),
		subnetCache,
	)
}

// newMutationHandler routes AdmissionReviews to the mutator the way Harvester's webhook server does
// (pkg/webhook/server/mutation.go: wrangler's webhook router, addHandler, types.NewAdmissionHandler with
// AdmissionTypeMutation), so the JSON patches it answers are Harvester's own.
func newMutationHandler(m types.Mutator) http.Handler {
	router := webhook.NewRouter()
	rsc := m.Resource()
	kind := reflect.Indirect(reflect.ValueOf(rsc.ObjectType)).Type().Name()
	router.Kind(kind).Group(rsc.APIGroup).Type(rsc.ObjectType).
		Handle(types.NewAdmissionHandler(m, types.AdmissionTypeMutation, harvesterOptions))
	return router
}
