package harvester

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// typedResource is a typed view of one API resource through the dynamic client. client-go's generated typed clients
// would be the natural choice, but since client-go 0.27 each of them links the whole kubernetes scheme (every
// API group's types) and the apply configurations: with core/v1 alone the plugin grew by 14 MB. The dynamic
// client plus a conversion into the same k8s.io/api types costs next to nothing.
type typedResource[T any] struct {
	dyn dynamic.Interface
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
}

// The resources the driver reads and writes besides VMs and VMIs (those use KubeVirt's generated client).
func (c *clients) secrets() typedResource[corev1.Secret] {
	return newResource[corev1.Secret](c.dynamic, corev1.SchemeGroupVersion.WithKind("Secret"), "secrets")
}

func (c *clients) claims() typedResource[corev1.PersistentVolumeClaim] {
	return newResource[corev1.PersistentVolumeClaim](c.dynamic, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "persistentvolumeclaims")
}

func (c *clients) namespaces() typedResource[corev1.Namespace] {
	return newResource[corev1.Namespace](c.dynamic, corev1.SchemeGroupVersion.WithKind("Namespace"), "namespaces")
}

func (c *clients) serviceAccounts() typedResource[corev1.ServiceAccount] {
	return newResource[corev1.ServiceAccount](c.dynamic, corev1.SchemeGroupVersion.WithKind("ServiceAccount"), "serviceaccounts")
}

func (c *clients) configMaps() typedResource[corev1.ConfigMap] {
	return newResource[corev1.ConfigMap](c.dynamic, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps")
}

func (c *clients) clusterRoles() typedResource[rbacv1.ClusterRole] {
	return newResource[rbacv1.ClusterRole](c.dynamic, rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), "clusterroles")
}

func (c *clients) roleBindings() typedResource[rbacv1.RoleBinding] {
	return newResource[rbacv1.RoleBinding](c.dynamic, rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), "rolebindings")
}

func (c *clients) clusterRoleBindings() typedResource[rbacv1.ClusterRoleBinding] {
	return newResource[rbacv1.ClusterRoleBinding](c.dynamic, rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), "clusterrolebindings")
}

func (c *clients) nodes() typedResource[corev1.Node] {
	return newResource[corev1.Node](c.dynamic, corev1.SchemeGroupVersion.WithKind("Node"), "nodes")
}

func (c *clients) storageClasses() typedResource[storagev1.StorageClass] {
	return newResource[storagev1.StorageClass](c.dynamic, storagev1.SchemeGroupVersion.WithKind("StorageClass"), "storageclasses")
}

func (c *clients) accessReviews() typedResource[authorizationv1.SelfSubjectAccessReview] {
	return newResource[authorizationv1.SelfSubjectAccessReview](c.dynamic, authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview"), "selfsubjectaccessreviews")
}

func (c *clients) images() typedResource[virtualMachineImage] {
	return newResource[virtualMachineImage](c.dynamic, harvesterGroupVersion.WithKind("VirtualMachineImage"), "virtualmachineimages")
}

func (c *clients) keyPairs() typedResource[keyPair] {
	return newResource[keyPair](c.dynamic, harvesterGroupVersion.WithKind("KeyPair"), "keypairs")
}

func (c *clients) networks() typedResource[metav1.PartialObjectMetadata] {
	gv := schema.GroupVersion{Group: "k8s.cni.cncf.io", Version: "v1"}
	return newResource[metav1.PartialObjectMetadata](c.dynamic, gv.WithKind("NetworkAttachmentDefinition"), "network-attachment-definitions")
}

func newResource[T any](dyn dynamic.Interface, gvk schema.GroupVersionKind, plural string) typedResource[T] {
	return typedResource[T]{dyn: dyn, gvk: gvk, gvr: gvk.GroupVersion().WithResource(plural)}
}

// in addresses the resource in namespace ns ("" for cluster-scoped resources).
func (r typedResource[T]) in(ns string) dynamic.ResourceInterface {
	if ns == "" {
		return r.dyn.Resource(r.gvr)
	}
	return r.dyn.Resource(r.gvr).Namespace(ns)
}

func (r typedResource[T]) get(ctx context.Context, ns, name string) (*T, error) {
	u, err := r.in(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](u)
}

func (r typedResource[T]) list(ctx context.Context, ns string, opts metav1.ListOptions) ([]T, error) {
	l, err := r.in(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(l.Items))
	for i := range l.Items {
		obj, err := fromUnstructured[T](&l.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *obj)
	}
	return out, nil
}

func (r typedResource[T]) create(ctx context.Context, ns string, obj *T) (*T, error) {
	u, err := r.toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	created, err := r.in(ns).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](created)
}

func (r typedResource[T]) update(ctx context.Context, ns string, obj *T) (*T, error) {
	u, err := r.toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	updated, err := r.in(ns).Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](updated)
}

func (r typedResource[T]) mergePatch(ctx context.Context, ns, name string, patch []byte) error {
	_, err := r.in(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func (r typedResource[T]) delete(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
	return r.in(ns).Delete(ctx, name, opts)
}

// toUnstructured converts obj and stamps its apiVersion and kind (typed objects often leave them empty).
func (r typedResource[T]) toUnstructured(obj *T) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(r.gvk)
	return u, nil
}

func fromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
