// Package kubefake is the tests' Harvester: client-go's fakes behind a kube.Client, made to behave as an API
// server does where the driver relies on it (UIDs and creation times, a delete's UID precondition, a watch from
// the resource version a list returned, access and rules reviews), with reactors to inject failures, an imitation
// of Harvester's harvester-system namespace (HarvesterSystem), and the capture of what the code under test logs.
// The tests of package harvester, harvester/ippool and harvester/guestaccount share it; only tests import it.
package kubefake

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"syscall"
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
	{Version: "v1", Resource: "secrets"}:                                                              "SecretList",
	{Version: "v1", Resource: "persistentvolumeclaims"}:                                               "PersistentVolumeClaimList",
	{Version: "v1", Resource: "namespaces"}:                                                           "NamespaceList",
	{Version: "v1", Resource: "nodes"}:                                                                "NodeList",
	{Version: "v1", Resource: "pods"}:                                                                 "PodList",
	{Version: "v1", Resource: "resourcequotas"}:                                                       "ResourceQuotaList",
	{Version: "v1", Resource: "serviceaccounts"}:                                                      "ServiceAccountList",
	{Version: "v1", Resource: "configmaps"}:                                                           "ConfigMapList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}:                     "ClusterRoleList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}:                     "RoleBindingList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}:              "ClusterRoleBindingList",
	{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                              "StorageClassList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "virtualmachineimages"}:                  "VirtualMachineImageList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "keypairs"}:                              "KeyPairList",
	{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}:             "NetworkAttachmentDefinitionList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}:              "SelfSubjectAccessReviewList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"}:               "SelfSubjectRulesReviewList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcidevices"}:                    "PCIDeviceList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcideviceclaims"}:               "PCIDeviceClaimList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "usbdevices"}:                    "USBDeviceList",
	{Group: "loadbalancer.harvesterhci.io", Version: "v1beta1", Resource: "ippools"}:                  "IPPoolList",
	{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "ippools"}:                      "IPPoolList",
	{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "virtualmachinenetworkconfigs"}: "VirtualMachineNetworkConfigList",
	{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}:                                         "SubnetList",
}

// New returns an empty Cluster whose client tells a user whose credential is rejected renew.
func New(t *testing.T, renew string) *Cluster {
	t.Helper()
	fc := &Cluster{T: t, KV: kvfake.NewSimpleClientset(), Denied: map[string]bool{}}
	fc.Dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	// The fakes do not assign UIDs or creation times; the driver relies on them (owner references, delete
	// preconditions, the lifetime of an address allocation).
	stampUID := func(a k8stesting.Action) (bool, runtime.Object, error) {
		fc.stamp(a.(k8stesting.CreateAction).GetObject())
		return false, nil, nil
	}
	// A dry run is judged and answered as a create and not stored (k8s.io/apiserver pkg/registry/generic/registry
	// DryRunnableStorage.Create); the fakes' tracker would store it.
	fc.KV.PrependReactor("create", "*", dryRun(fc.KV.Tracker()))
	fc.Dyn.PrependReactor("create", "*", dryRun(fc.Dyn.Tracker()))
	fc.KV.PrependReactor("create", "*", stampUID)
	fc.Dyn.PrependReactor("create", "*", stampUID)
	// Prepended before the UID precondition below, so it runs after it: only a delete that is allowed collects.
	fc.KV.PrependReactor("delete", "virtualmachines", fc.collectGarbage)
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

// collectGarbage deletes a VM and then, as Kubernetes' garbage collector does once a VM is deleted (whatever the
// propagation but orphan, which the driver never asks for), the Secrets in its namespace that it owns: the part of
// the collector the driver relies on (Remove leaves a finished create's cloud-init Secret to it). The VM's VMI is
// the tests' imitation of KubeVirt's to delete. It answers for the tracker, under the fake's lock, so a test sees
// both gone once the delete returns; the real collector follows a moment later (kubernetes v1.36.3
// pkg/controller/garbagecollector, attemptToDeleteItem).
func (fc *Cluster) collectGarbage(a k8stesting.Action) (bool, runtime.Object, error) {
	d := a.(k8stesting.DeleteAction)
	vms := fc.KV.Tracker()
	obj, err := vms.Get(d.GetResource(), d.GetNamespace(), d.GetName())
	if err != nil {
		return false, nil, nil // the tracker answers: not found
	}
	if err := vms.Delete(d.GetResource(), d.GetNamespace(), d.GetName()); err != nil {
		return true, nil, err
	}
	vm, err := meta.Accessor(obj)
	if err != nil {
		return true, nil, nil
	}
	secrets := fc.Dyn.Tracker()
	gvr := corev1.SchemeGroupVersion.WithResource("secrets")
	list, err := secrets.List(gvr, corev1.SchemeGroupVersion.WithKind("Secret"), d.GetNamespace())
	if err != nil {
		fc.T.Errorf("kubefake: the garbage collector cannot list Secrets: %v", err)
		return true, nil, nil
	}
	items, _ := meta.ExtractList(list)
	for _, item := range items {
		s, err := meta.Accessor(item)
		if err != nil {
			continue
		}
		for _, o := range s.GetOwnerReferences() {
			if o.UID == vm.GetUID() {
				_ = secrets.Delete(gvr, s.GetNamespace(), s.GetName())
				break
			}
		}
	}
	return true, nil, nil
}

// stamp gives a new object its UID and creation time, as the API server does.
func (fc *Cluster) stamp(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil && m.GetUID() == "" {
		m.SetUID(types.UID(fmt.Sprintf("uid-%d", fc.uids.Add(1))))
		if ts := m.GetCreationTimestamp(); ts.IsZero() {
			m.SetCreationTimestamp(metav1.Now())
		}
	}
}

// dryRun answers a create with dryRun=All as the API server does: AlreadyExists for a name that is taken, else
// the object as it would be stored, which is not.
func dryRun(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := a.(k8stesting.CreateActionImpl)
		if !ok || !slices.Contains(create.GetCreateOptions().DryRun, metav1.DryRunAll) || create.GetSubresource() != "" {
			return false, nil, nil
		}
		obj := create.GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		if _, err := tracker.Get(create.GetResource(), create.GetNamespace(), m.GetName()); err == nil {
			return true, nil, apierrors.NewAlreadyExists(create.GetResource().GroupResource(), m.GetName())
		}
		return true, obj, nil
	}
}

// WebhookDenial is the error the API server returns when admission webhook name refuses a request with result,
// the Status the webhook answered (k8s.io/apiserver pkg/admission/plugin/webhook/errors ToStatusErr).
func WebhookDenial(name string, result metav1.Status) *apierrors.StatusError {
	denied := fmt.Sprintf("admission webhook %q denied the request", name)
	result.Code = max(result.Code, http.StatusBadRequest)
	if result.Status == "" || result.Status == metav1.StatusSuccess {
		result.Status = metav1.StatusFailure
	}
	switch {
	case result.Message != "":
		result.Message = denied + ": " + result.Message
	case result.Reason != "":
		result.Message = denied + ": " + string(result.Reason)
	default:
		result.Message = denied + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: result}
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

// ConnectionReset is the error client-go returns when the connection breaks before the answer arrives: the
// request may or may not have been carried out.
func ConnectionReset(method, path string) error {
	return &url.Error{Op: method, URL: "https://harvester.test:6443" + path, Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
}

// LoseAnswer makes the first create of resource be carried out by the API server and its answer lost, as when
// the connection breaks after the server wrote the object: the object exists, and the client gets
// ConnectionReset. It returns a counter of the times it fired.
func (fc *Cluster) LoseAnswer(resource string) *atomic.Int32 {
	var fired atomic.Int32
	for _, f := range []struct {
		fake    *k8stesting.Fake
		tracker k8stesting.ObjectTracker
	}{{&fc.KV.Fake, fc.KV.Tracker()}, {&fc.Dyn.Fake, fc.Dyn.Tracker()}} {
		f.fake.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			if !fired.CompareAndSwap(0, 1) {
				return false, nil, nil
			}
			obj := a.(k8stesting.CreateAction).GetObject()
			fc.stamp(obj)
			if err := f.tracker.Create(a.GetResource(), obj, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, nil, ConnectionReset("Post", "/"+a.GetResource().Resource)
		})
	}
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
