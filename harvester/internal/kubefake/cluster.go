// Package kubefake is the tests' Harvester: client-go's fakes behind a kube.Client, made to behave as an API
// server does where the driver relies on it (UIDs and creation times, a delete's UID precondition, a watch from
// the resource version a list returned, access and rules reviews), with reactors to inject failures, an imitation
// of Harvester's harvester-system namespace (HarvesterSystem), and the capture of what the code under test logs.
// The tests of package harvester, harvester/ippool and harvester/guestaccount share it; only tests import it.
package kubefake

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	kvfake "kubevirt.io/client-go/kubevirt/fake"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// Cluster is a Harvester made of client-go fakes: KubeVirt's generated fake clientset for VMs and VMIs, the
// dynamic fake for the rest, both behind C.
type Cluster struct {
	T   *testing.T
	KV  *kvfake.Clientset
	Dyn *dynamicfake.FakeDynamicClient
	C   kube.Interface
	// Denied are the "verb resource" pairs the rules and access reviews deny.
	Denied map[string]bool
	// RulesIncomplete makes the rules reviews answer incomplete, as with an authorizer that cannot list rules.
	RulesIncomplete bool
	// Asked are the permissions the code under test asks about. When some are denied, the rules reviews grant
	// every verb but those on each of their resources: RBAC has no rule for "everything but".
	Asked []kube.Access
	uids  atomic.Int64
}

var listKinds = map[schema.GroupVersionResource]string{
	{Version: "v1", Resource: "secrets"}:                                                  "SecretList",
	{Version: "v1", Resource: "persistentvolumeclaims"}:                                   "PersistentVolumeClaimList",
	{Version: "v1", Resource: "namespaces"}:                                               "NamespaceList",
	{Version: "v1", Resource: "nodes"}:                                                    "NodeList",
	{Version: "v1", Resource: "pods"}:                                                     "PodList",
	{Version: "v1", Resource: "resourcequotas"}:                                           "ResourceQuotaList",
	{Version: "v1", Resource: "serviceaccounts"}:                                          "ServiceAccountList",
	{Version: "v1", Resource: "configmaps"}:                                               "ConfigMapList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}:         "ClusterRoleList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}:         "RoleBindingList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}:  "ClusterRoleBindingList",
	{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                  "StorageClassList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "virtualmachineimages"}:      "VirtualMachineImageList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "keypairs"}:                  "KeyPairList",
	{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}: "NetworkAttachmentDefinitionList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}:  "SelfSubjectAccessReviewList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"}:   "SelfSubjectRulesReviewList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcidevices"}:        "PCIDeviceList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcideviceclaims"}:   "PCIDeviceClaimList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "usbdevices"}:        "USBDeviceList",
	{Group: "loadbalancer.harvesterhci.io", Version: "v1beta1", Resource: "ippools"}:      "IPPoolList",
}

// New returns an empty Cluster whose client tells a user whose credential is rejected renew.
func New(t *testing.T, renew string) *Cluster {
	t.Helper()
	fc := &Cluster{T: t, KV: kvfake.NewSimpleClientset(), Denied: map[string]bool{}}
	fc.Dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	// The fakes do not assign UIDs or creation times; the driver relies on them (owner references, delete
	// preconditions, the lifetime of an address allocation).
	stampUID := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if m, err := meta.Accessor(a.(k8stesting.CreateAction).GetObject()); err == nil && m.GetUID() == "" {
			m.SetUID(types.UID(fmt.Sprintf("uid-%d", fc.uids.Add(1))))
			if ts := m.GetCreationTimestamp(); ts.IsZero() {
				m.SetCreationTimestamp(metav1.Now())
			}
		}
		return false, nil, nil
	}
	fc.KV.PrependReactor("create", "*", stampUID)
	fc.Dyn.PrependReactor("create", "*", stampUID)
	// The fakes ignore a delete's UID precondition; the API server refuses a delete of another object.
	for _, f := range []*k8stesting.Fake{&fc.KV.Fake, &fc.Dyn.Fake} {
		tracker := fc.KV.Tracker()
		if f == &fc.Dyn.Fake {
			tracker = fc.Dyn.Tracker()
		}
		f.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			d := a.(k8stesting.DeleteAction)
			pre := d.GetDeleteOptions().Preconditions
			if pre == nil || pre.UID == nil {
				return false, nil, nil
			}
			obj, err := tracker.Get(d.GetResource(), d.GetNamespace(), d.GetName())
			if err != nil {
				return false, nil, nil
			}
			if m, err := meta.Accessor(obj); err == nil && m.GetUID() != *pre.UID {
				return true, nil, apierrors.NewConflict(d.GetResource().GroupResource(), d.GetName(),
					fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, m.GetUID()))
			}
			return false, nil, nil
		})
	}
	answer(fc.Dyn, "selfsubjectaccessreviews", kube.AccessReviews, func(r *authorizationv1.SelfSubjectAccessReview) {
		r.Status.Allowed = !fc.Denied[r.Spec.ResourceAttributes.Verb+" "+r.Spec.ResourceAttributes.Resource]
	})
	answer(fc.Dyn, "selfsubjectrulesreviews", kube.RulesReviews, func(r *authorizationv1.SelfSubjectRulesReview) { r.Status = fc.rules() })
	installListThenWatch(fc.KV)
	fc.C = kube.New(kubevirtFake{fc.KV}, fc.Dyn, "harvester.test:6443", renew)
	return fc
}

// answer makes the creates of a review resource (of kind k) return the review as fill completes it.
func answer[T any](dyn *dynamicfake.FakeDynamicClient, resource string, k kube.Kind[T], fill func(*T)) {
	dyn.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		var review T
		u := a.(k8stesting.CreateAction).GetObject()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.(runtime.Unstructured).UnstructuredContent(), &review); err != nil {
			return true, nil, err
		}
		fill(&review)
		out, _ := kube.ToUnstructured(k, &review)
		return true, out, nil
	})
}

// rules is what the rules reviews answer: everything, or, when some "verb resource" is denied, every verb on every
// resource of Asked but those.
func (fc *Cluster) rules() authorizationv1.SubjectRulesReviewStatus {
	if fc.RulesIncomplete {
		return authorizationv1.SubjectRulesReviewStatus{Incomplete: true, EvaluationError: "webhook authorizer does not support user rule resolution"}
	}
	if len(fc.Denied) == 0 {
		return authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	var status authorizationv1.SubjectRulesReviewStatus
	var seen []string
	for _, a := range fc.Asked {
		if slices.Contains(seen, a.Resource) {
			continue
		}
		seen = append(seen, a.Resource)
		rule := authorizationv1.ResourceRule{APIGroups: []string{"*"}, Resources: []string{a.Resource}}
		for _, v := range verbs {
			if !fc.Denied[v+" "+a.Resource] {
				rule.Verbs = append(rule.Verbs, v)
			}
		}
		status.ResourceRules = append(status.ResourceRules, rule)
	}
	return status
}

// OK fails the test on a seeding error: fc.OK(client call).
func (fc *Cluster) OK(_ any, err error) {
	fc.T.Helper()
	if err != nil {
		fc.T.Fatal(err)
	}
}

// FailOn makes the first matching request fail with err (verb, resource; subresource optional via resource
// "secrets" etc.). It returns a counter of the times it fired.
func (fc *Cluster) FailOn(verb, resource string, err error) *atomic.Int32 {
	var fired atomic.Int32
	react := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fired.Load() > 0 {
			return false, nil, nil
		}
		fired.Add(1)
		return true, nil, err
	}
	fc.KV.PrependReactor(verb, resource, react)
	fc.Dyn.PrependReactor(verb, resource, react)
	return &fired
}

// ConfigMaps returns the ConfigMaps of namespace ns, by name.
func (fc *Cluster) ConfigMaps(ns string) map[string]corev1.ConfigMap {
	fc.T.Helper()
	list, err := kube.List(context.Background(), fc.C, kube.ConfigMaps, ns, metav1.ListOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	out := map[string]corev1.ConfigMap{}
	for _, cm := range list {
		out[cm.Name] = cm
	}
	return out
}

// Namespace creates namespace name.
func (fc *Cluster) Namespace(name string) {
	fc.T.Helper()
	fc.OK(kube.Create(context.Background(), fc.C, kube.Namespaces, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}
