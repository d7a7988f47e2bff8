package kube

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Kind is one API resource read and written as the Go type T through the dynamic client. client-go's generated
// typed clients would be the natural choice, but since client-go 0.27 each of them links the whole kubernetes
// scheme (every API group's types) and the apply configurations: with core/v1 alone the plugin grew by 14 MB.
// The dynamic client plus a conversion into the same k8s.io/api types costs next to nothing.
type Kind[T any] struct {
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
}

func kind[T any](gv schema.GroupVersion, kind, plural string) Kind[T] {
	return Kind[T]{gvk: gv.WithKind(kind), gvr: gv.WithResource(plural)}
}

// The resources the driver reads and writes besides VMs and VMIs (those use KubeVirt's generated client).
var (
	Secrets             = kind[corev1.Secret](corev1.SchemeGroupVersion, "Secret", "secrets")
	Claims              = kind[corev1.PersistentVolumeClaim](corev1.SchemeGroupVersion, "PersistentVolumeClaim", "persistentvolumeclaims")
	Namespaces          = kind[corev1.Namespace](corev1.SchemeGroupVersion, "Namespace", "namespaces")
	ServiceAccounts     = kind[corev1.ServiceAccount](corev1.SchemeGroupVersion, "ServiceAccount", "serviceaccounts")
	ConfigMaps          = kind[corev1.ConfigMap](corev1.SchemeGroupVersion, "ConfigMap", "configmaps")
	Nodes               = kind[corev1.Node](corev1.SchemeGroupVersion, "Node", "nodes")
	ClusterRoles        = kind[rbacv1.ClusterRole](rbacv1.SchemeGroupVersion, "ClusterRole", "clusterroles")
	RoleBindings        = kind[rbacv1.RoleBinding](rbacv1.SchemeGroupVersion, "RoleBinding", "rolebindings")
	ClusterRoleBindings = kind[rbacv1.ClusterRoleBinding](rbacv1.SchemeGroupVersion, "ClusterRoleBinding", "clusterrolebindings")
	StorageClasses      = kind[storagev1.StorageClass](storagev1.SchemeGroupVersion, "StorageClass", "storageclasses")
	AccessReviews       = kind[authorizationv1.SelfSubjectAccessReview](authorizationv1.SchemeGroupVersion, "SelfSubjectAccessReview", "selfsubjectaccessreviews")
	Images              = kind[VirtualMachineImage](HarvesterGroupVersion, "VirtualMachineImage", "virtualmachineimages")
	KeyPairs            = kind[KeyPair](HarvesterGroupVersion, "KeyPair", "keypairs")
	// Networks are Harvester's VM networks: Multus NetworkAttachmentDefinitions, of which only the name matters.
	Networks = kind[metav1.PartialObjectMetadata](schema.GroupVersion{Group: "k8s.cni.cncf.io", Version: "v1"},
		"NetworkAttachmentDefinition", "network-attachment-definitions")
)

// Resource returns the plural resource name, as the API server names it in errors (see IsGone).
func (k Kind[T]) Resource() string { return k.gvr.Resource }

// Of is the resource as c serves it.
func (k Kind[T]) Of(c Interface) Resource[T] { return Resource[T]{kind: k, dyn: c.Dynamic()} }

// Resource is a Kind served by one client.
type Resource[T any] struct {
	kind Kind[T]
	dyn  dynamic.Interface
}

// In addresses the resource in namespace ns ("" for cluster-scoped resources).
func (r Resource[T]) In(ns string) dynamic.ResourceInterface {
	if ns == "" {
		return r.dyn.Resource(r.kind.gvr)
	}
	return r.dyn.Resource(r.kind.gvr).Namespace(ns)
}

func (r Resource[T]) Get(ctx context.Context, ns, name string) (*T, error) {
	u, err := r.In(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return FromUnstructured[T](u)
}

func (r Resource[T]) List(ctx context.Context, ns string, opts metav1.ListOptions) ([]T, error) {
	l, err := r.In(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(l.Items))
	for i := range l.Items {
		obj, err := FromUnstructured[T](&l.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *obj)
	}
	return out, nil
}

func (r Resource[T]) Create(ctx context.Context, ns string, obj *T) (*T, error) {
	return r.send(obj, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.In(ns).Create(ctx, u, metav1.CreateOptions{})
	})
}

func (r Resource[T]) Update(ctx context.Context, ns string, obj *T) (*T, error) {
	return r.send(obj, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.In(ns).Update(ctx, u, metav1.UpdateOptions{})
	})
}

// send converts obj, makes the call with it and converts what the API server returned.
func (r Resource[T]) send(obj *T, call func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*T, error) {
	u, err := r.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	got, err := call(u)
	if err != nil {
		return nil, err
	}
	return FromUnstructured[T](got)
}

func (r Resource[T]) MergePatch(ctx context.Context, ns, name string, patch []byte) error {
	_, err := r.In(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func (r Resource[T]) Delete(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
	return r.In(ns).Delete(ctx, name, opts)
}

// CreateOrGet creates obj, or returns the existing object of its name.
func (r Resource[T]) CreateOrGet(ctx context.Context, ns string, obj *T) (*T, error) {
	created, err := r.Create(ctx, ns, obj)
	if apierrors.IsAlreadyExists(err) {
		u, _ := r.ToUnstructured(obj)
		return r.Get(ctx, ns, u.GetName())
	}
	return created, err
}

// ToUnstructured converts obj and stamps its apiVersion and kind (typed objects often leave them empty).
func (r Resource[T]) ToUnstructured(obj *T) (*unstructured.Unstructured, error) {
	return r.kind.ToUnstructured(obj)
}

// ToUnstructured converts obj and stamps its apiVersion and kind (typed objects often leave them empty).
func (k Kind[T]) ToUnstructured(obj *T) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(k.gvk)
	return u, nil
}

// FromUnstructured converts what the dynamic client returned into T.
func FromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
