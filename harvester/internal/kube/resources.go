package kube

import (
	"context"
	"fmt"
	"reflect"

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

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
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

// The resources the driver reads and writes besides VMs and VMIs (those have their client in kubevirt.go).
var (
	Secrets             = kind[corev1.Secret](corev1.SchemeGroupVersion, "Secret", "secrets")
	Claims              = kind[corev1.PersistentVolumeClaim](corev1.SchemeGroupVersion, "PersistentVolumeClaim", "persistentvolumeclaims")
	Namespaces          = kind[corev1.Namespace](corev1.SchemeGroupVersion, "Namespace", "namespaces")
	ServiceAccounts     = kind[corev1.ServiceAccount](corev1.SchemeGroupVersion, "ServiceAccount", "serviceaccounts")
	ConfigMaps          = kind[corev1.ConfigMap](corev1.SchemeGroupVersion, "ConfigMap", "configmaps")
	Pods                = kind[corev1.Pod](corev1.SchemeGroupVersion, "Pod", "pods")
	Nodes               = kind[corev1.Node](corev1.SchemeGroupVersion, "Node", "nodes")
	ResourceQuotas      = kind[corev1.ResourceQuota](corev1.SchemeGroupVersion, "ResourceQuota", "resourcequotas")
	ClusterRoles        = kind[rbacv1.ClusterRole](rbacv1.SchemeGroupVersion, "ClusterRole", "clusterroles")
	Roles               = kind[rbacv1.Role](rbacv1.SchemeGroupVersion, "Role", "roles")
	RoleBindings        = kind[rbacv1.RoleBinding](rbacv1.SchemeGroupVersion, "RoleBinding", "rolebindings")
	ClusterRoleBindings = kind[rbacv1.ClusterRoleBinding](rbacv1.SchemeGroupVersion, "ClusterRoleBinding", "clusterrolebindings")
	StorageClasses      = kind[storagev1.StorageClass](storagev1.SchemeGroupVersion, "StorageClass", "storageclasses")
	AccessReviews       = kind[authorizationv1.SelfSubjectAccessReview](authorizationv1.SchemeGroupVersion, "SelfSubjectAccessReview", "selfsubjectaccessreviews")
	RulesReviews        = kind[authorizationv1.SelfSubjectRulesReview](authorizationv1.SchemeGroupVersion, "SelfSubjectRulesReview", "selfsubjectrulesreviews")
	Images              = kind[VirtualMachineImage](HarvesterGroupVersion, "VirtualMachineImage", "virtualmachineimages")
	KeyPairs            = kind[KeyPair](HarvesterGroupVersion, "KeyPair", "keypairs")
	Settings            = kind[Setting](HarvesterGroupVersion, "Setting", "settings")
)

// The operations on a Kind are functions, not methods: a generic type's exported methods are linked for every
// type it is instantiated with (reflection could reach them), while a generic function is linked only for the
// types it is called with — 14 kinds × 8 methods cost the plugin some 300 KB.

// in addresses the resource in namespace ns ("" for cluster-scoped resources).
func in[T any](c Interface, k Kind[T], ns string) dynamic.ResourceInterface {
	if ns == "" {
		return c.Dynamic().Resource(k.gvr)
	}
	return c.Dynamic().Resource(k.gvr).Namespace(ns)
}

// FromCache is the resourceVersion of a read the API server may answer from its watch cache instead of etcd:
// "0" means any version the server has (k8s.io/apiserver pkg/storage/cacher, and the API concepts' "Semantics
// for get and list"). The object may be a moment old; the server is spared a read of etcd. The pre-flight reads
// this way: its reads only advise — what a create writes, the server checks again.
const FromCache = "0"

// Get reads the object of kind k named name in namespace ns ("" for cluster-scoped kinds).
func Get[T any](ctx context.Context, c Interface, k Kind[T], ns, name string) (*T, error) {
	return get(ctx, c, k, ns, name, metav1.GetOptions{})
}

// GetCached reads like Get, from the API server's watch cache (see FromCache).
func GetCached[T any](ctx context.Context, c Interface, k Kind[T], ns, name string) (*T, error) {
	return get(ctx, c, k, ns, name, metav1.GetOptions{ResourceVersion: FromCache})
}

func get[T any](ctx context.Context, c Interface, k Kind[T], ns, name string, opts metav1.GetOptions) (*T, error) {
	u, err := in(c, k, ns).Get(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return FromUnstructured[T](u)
}

// List lists the objects of kind k in namespace ns.
func List[T any](ctx context.Context, c Interface, k Kind[T], ns string, opts metav1.ListOptions) ([]T, error) {
	l, err := in(c, k, ns).List(ctx, opts)
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

// Create creates obj in namespace ns and returns it as the API server stored it.
func Create[T any](ctx context.Context, c Interface, k Kind[T], ns string, obj *T) (*T, error) {
	return create(ctx, c, k, ns, obj, metav1.CreateOptions{})
}

// DryRunCreate asks the API server to create obj in namespace ns as a dry run (DryRunAll) and returns what it
// would have stored: the create is judged in full and nothing is written.
func DryRunCreate[T any](ctx context.Context, c Interface, k Kind[T], ns string, obj *T) (*T, error) {
	return create(ctx, c, k, ns, obj, DryRunAll())
}

func create[T any](ctx context.Context, c Interface, k Kind[T], ns string, obj *T, opts metav1.CreateOptions) (*T, error) {
	return send(k, obj, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return in(c, k, ns).Create(ctx, u, opts)
	})
}

// Update replaces obj in namespace ns and returns it as the API server stored it.
func Update[T any](ctx context.Context, c Interface, k Kind[T], ns string, obj *T) (*T, error) {
	return send(k, obj, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return in(c, k, ns).Update(ctx, u, metav1.UpdateOptions{})
	})
}

// send converts obj, makes the call with it and converts what the API server returned.
func send[T any](k Kind[T], obj *T, call func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*T, error) {
	u, err := ToUnstructured(k, obj)
	if err != nil {
		return nil, err
	}
	got, err := call(u)
	if err != nil {
		return nil, err
	}
	return FromUnstructured[T](got)
}

// MergePatch applies a JSON merge patch to the object of kind k named name.
func MergePatch[T any](ctx context.Context, c Interface, k Kind[T], ns, name string, patch []byte) error {
	_, err := in(c, k, ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// Delete deletes the object of kind k named name.
func Delete[T any](ctx context.Context, c Interface, k Kind[T], ns, name string, opts metav1.DeleteOptions) error {
	return in(c, k, ns).Delete(ctx, name, opts)
}

// CreateOrGet creates obj, or returns the existing object of its name.
func CreateOrGet[T any](ctx context.Context, c Interface, k Kind[T], ns string, obj *T) (*T, error) {
	created, err := Create(ctx, c, k, ns, obj)
	if apierrors.IsAlreadyExists(err) {
		u, _ := ToUnstructured(k, obj)
		return Get(ctx, c, k, ns, u.GetName())
	}
	return created, err
}

// ToUnstructured converts obj and stamps its apiVersion and kind (typed objects often leave them empty).
func ToUnstructured[T any](k Kind[T], obj *T) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(k.gvk)
	return u, nil
}

// FromUnstructured converts what the dynamic client returned into T, once its quantities have passed
// quantity.Form (guard.go): the conversion parses them.
func FromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	var out T
	if err := quantity.Bound(u.Object, reflect.TypeFor[T]()); err != nil {
		return nil, fmt.Errorf("%s: %w", objectName(reflect.TypeFor[T]().Name(), u.GetNamespace(), u.GetName()), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
