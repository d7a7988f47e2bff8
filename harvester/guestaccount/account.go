// Package guestaccount makes a guest cluster's cloud-provider account in Harvester: the scoped ServiceAccount
// that the guest cluster's Harvester cloud provider and CSI driver use, with roles of its own (rules.go), and the
// kubeconfig of its token (kubeconfig.go), which CloudConfig wraps in a #cloud-config. The driver's create makes
// it for --harvester-generate-cloud-provider-config (Ensure) and its pre-flight asks for Access; the
// cloud-provider-config verb makes it from a credential alone, with no machine (EnsureWith).
//
// It sits on harvester/config and harvester/connection and talks through harvester/internal/kube; it knows no
// Driver.
package guestaccount

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Account names the scoped identity of one guest cluster.
type Account struct {
	// Namespace is the guest cluster's VM namespace; the identity may act in it only.
	Namespace string
	// Cluster is the guest cluster's name; the objects carry it in their guest-cluster label.
	Cluster string
	// ServiceAccount names the identity; empty for config.CloudProviderAccountName(Cluster).
	ServiceAccount string
	// Server is Harvester's API as the guests reach it, https://<VIP>:6443; empty to discover it from
	// Harvester's vip ConfigMap. A Rancher proxy URL (/k8s/clusters/…) is refused: a token of Harvester's
	// service account means nothing to Rancher.
	Server string
}

// Name is the account's ServiceAccount name.
func (a Account) Name() string {
	if a.ServiceAccount != "" {
		return a.ServiceAccount
	}
	return config.CloudProviderAccountName(a.Cluster)
}

// labels are the driver's mark on every object of the account; an object of the same name without them is
// someone else's and is neither used nor changed.
func (a Account) labels() map[string]string {
	return map[string]string{config.LabelCreator: config.CreatorName, config.LabelGuestCluster: config.LabelValue(a.Cluster)}
}

// sharedName names the account's objects outside its namespace (in harvester-system and cluster-scoped), which
// the accounts of every VM namespace share: "<namespace>:<account>", a ':' being in neither name.
func (a Account) sharedName() string { return a.Namespace + ":" + a.Name() }

func (a Account) check() error {
	var errs []string
	if msgs := validation.IsDNS1123Label(a.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Sprintf("namespace %q is not a namespace name", a.Namespace))
	}
	if err := config.CheckGuestClusterName(a.Cluster); err != nil {
		errs = append(errs, "guest cluster name "+err.Error())
	}
	if a.ServiceAccount != "" {
		if err := config.CheckCloudProviderAccountName(a.ServiceAccount); err != nil {
			errs = append(errs, "service account name "+err.Error())
		}
	}
	if a.Server != "" {
		if err := config.CheckGuestServer(a.Server); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cloud provider account: %s", config.Redact(strings.Join(errs, "; ")))
	}
	return nil
}

// EnsureWith connects to Harvester with cred (see connection.Credential) and makes the guest cluster's account
// there (see Ensure). It replaces harvester/cloud-provider-harvester's generate_addon.sh; the
// cloud-provider-config subcommand runs it.
func EnsureWith(ctx context.Context, cred connection.Credential, a Account) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	c, _, err := connection.Connect(cred, time.Now())
	if err != nil {
		return nil, err
	}
	return Ensure(ctx, c, a)
}

// CloudConfig renders a #cloud-config that writes a cloud provider kubeconfig to the guest's cloud provider paths
// for a distribution (see config.LookupDistribution), as the driver writes it (with dropIn, also the
// distribution's drop-in that turns the Harvester cloud provider on): a snippet for user data written by hand.
func CloudConfig(kubeconfig []byte, dist config.Distribution, dropIn bool) ([]byte, error) {
	return cloudinit.WriteFilesConfig(objects.CloudProviderFiles(kubeconfig, dist, dropIn))
}

// Ensure makes, idempotently, the guest cluster's identity in Harvester, every object
// labelled as the driver's for the guest cluster:
//   - in the VM namespace: the ServiceAccount, its token Secret, and a Role (guestRules) with its RoleBinding, all
//     three dependents of the account;
//   - in harvester-system: a Role (networkFilesystemRules) with its RoleBinding;
//   - a ClusterRole (guestClusterRules) with its ClusterRoleBinding.
//
// An object of one of those names without the driver's labels is refused, untouched. Roles and bindings that
// are the driver's are brought back to what they must be. It waits for the token and returns a kubeconfig for
// it: Harvester's VIP as server, the CA embedded, the namespace as context namespace. Running it again changes
// nothing and gives the same token.
func Ensure(ctx context.Context, c kube.Interface, a Account) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	ns, name, labels := a.Namespace, a.Name(), a.labels()
	if _, err := kube.Get(ctx, c, kube.Namespaces, "", ns); err != nil {
		if kube.IsGone(err, "namespaces", ns) {
			return nil, fmt.Errorf("namespace %s does not exist in Harvester", ns)
		}
		return nil, c.Explain("read namespace", ns, err)
	}
	server := a.Server
	if server == "" {
		var err error
		if server, err = discoverVIP(ctx, c); err != nil {
			return nil, err
		}
	}

	sa, err := ensureOwned(ctx, c, kube.ServiceAccounts, labels, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}, nil)
	if err != nil {
		return nil, explainAccount(c, "create ServiceAccount", ns+"/"+name, err)
	}
	meta := func(ns, name string, owned bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
		if owned {
			m.OwnerReferences = []metav1.OwnerReference{saOwner(sa)}
		}
		return m
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}
	// Owner references only in the account's namespace: the garbage collector treats a namespaced owner in
	// another namespace as gone (and would delete the dependent), and ignores one of a cluster-scoped object.
	for _, r := range []struct {
		ns, name string
		rules    []rbacv1.PolicyRule
		owned    bool
	}{{ns, name, guestRules, true}, {harvesterSystemNamespace, a.sharedName(), networkFilesystemRules, false}} {
		if _, err := ensureOwned(ctx, c, kube.Roles, labels, &rbacv1.Role{ObjectMeta: meta(r.ns, r.name, r.owned), Rules: r.rules},
			func(got *rbacv1.Role) (bool, error) { return setRules(&got.Rules, r.rules), nil }); err != nil {
			return nil, explainAccount(c, "create Role", r.ns+"/"+r.name, err)
		}
		roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.name}
		if _, err := ensureOwned(ctx, c, kube.RoleBindings, labels, &rbacv1.RoleBinding{ObjectMeta: meta(r.ns, r.name, r.owned), Subjects: subjects, RoleRef: roleRef},
			func(got *rbacv1.RoleBinding) (bool, error) {
				return setBinding(r.ns+"/"+r.name, &got.Subjects, got.RoleRef, subjects, roleRef)
			}); err != nil {
			return nil, explainAccount(c, "create RoleBinding", r.ns+"/"+r.name, err)
		}
	}
	shared := a.sharedName()
	if _, err := ensureOwned(ctx, c, kube.ClusterRoles, labels, &rbacv1.ClusterRole{ObjectMeta: meta("", shared, false), Rules: guestClusterRules},
		func(got *rbacv1.ClusterRole) (bool, error) { return setRules(&got.Rules, guestClusterRules), nil }); err != nil {
		return nil, explainAccount(c, "create ClusterRole", shared, err)
	}
	clusterRoleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: shared}
	if _, err := ensureOwned(ctx, c, kube.ClusterRoleBindings, labels, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("", shared, false), Subjects: subjects, RoleRef: clusterRoleRef},
		func(got *rbacv1.ClusterRoleBinding) (bool, error) {
			return setBinding(shared, &got.Subjects, got.RoleRef, subjects, clusterRoleRef)
		}); err != nil {
		return nil, explainAccount(c, "create ClusterRoleBinding", shared, err)
	}
	// Since Kubernetes 1.24 a token Secret must be asked for; kube-controller-manager fills it in. The token
	// does not expire; it stops working when the Secret (or the account) is deleted.
	tokenName := config.CloudProviderTokenName(name)
	if _, err := ensureOwned(ctx, c, kube.Secrets, labels, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: tokenName, Namespace: ns, Labels: labels,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: name}, OwnerReferences: []metav1.OwnerReference{saOwner(sa)}},
		Type: corev1.SecretTypeServiceAccountToken,
	}, func(got *corev1.Secret) (bool, error) {
		if got.Type != corev1.SecretTypeServiceAccountToken || got.Annotations[corev1.ServiceAccountNameKey] != name {
			return false, refusal(fmt.Sprintf("Secret %s/%s exists but is not a token of ServiceAccount %s; delete it and run again", ns, tokenName, name))
		}
		return false, nil
	}); err != nil {
		return nil, explainAccount(c, "create the token Secret", ns+"/"+tokenName, err)
	}
	ca, token, err := waitForToken(ctx, c, ns, tokenName)
	if err != nil {
		return nil, err
	}
	logging.Debugf("Cloud provider account %s/%s is ready", ns, name)
	return accountKubeconfig(server, ns, ca, token)
}

// saOwner makes an object a dependent of the service account: it goes when the account is deleted.
func saOwner(sa *corev1.ServiceAccount) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID}
}

// refusal is the driver's own reason not to use an object of the account's names; it stands as it is.
type refusal string

func (r refusal) Error() string { return string(r) }

// explainAccount words a failure to make one of the account's objects.
func explainAccount(c kube.Interface, action, object string, err error) error {
	var r refusal
	if errors.As(err, &r) {
		return err
	}
	return c.Explain(action, object, err)
}

// ensureOwned creates want, or takes the existing object of its name if it carries labels — else it is someone
// else's, and refused untouched. fix (nil: nothing to fix) brings the driver's object in line with want and
// says whether it changed it; it is then updated.
func ensureOwned[T any](ctx context.Context, c kube.Interface, k kube.Kind[T], labels map[string]string, want *T, fix func(got *T) (bool, error)) (*T, error) {
	w, err := kube.ToUnstructured(k, want)
	if err != nil {
		return nil, err
	}
	ns := w.GetNamespace()
	got, err := kube.CreateOrGet(ctx, c, k, ns, want)
	if err != nil {
		return nil, err
	}
	u, err := kube.ToUnstructured(k, got)
	if err != nil {
		return nil, err
	}
	object := u.GetName()
	if ns != "" {
		object = ns + "/" + object
	}
	for key, v := range labels {
		if u.GetLabels()[key] != v {
			return nil, refusal(fmt.Sprintf("%s %s exists and was not made by the node driver for guest cluster %s (it lacks the label %s=%s); "+
				"it is left as it is: delete it if nothing uses it, or give the guest cluster another name", u.GetKind(), object, labels[config.LabelGuestCluster], key, v))
		}
	}
	if fix == nil {
		return got, nil
	}
	changed, err := fix(got)
	if err != nil || !changed {
		return got, err
	}
	return kube.Update(ctx, c, k, ns, got)
}

// setRules makes a role of the driver's hold exactly want.
func setRules(got *[]rbacv1.PolicyRule, want []rbacv1.PolicyRule) bool {
	if reflect.DeepEqual(*got, want) {
		return false
	}
	*got = want
	return true
}

// setBinding makes a binding of the driver's bind exactly the account. A roleRef cannot be changed.
func setBinding(object string, got *[]rbacv1.Subject, gotRef rbacv1.RoleRef, want []rbacv1.Subject, wantRef rbacv1.RoleRef) (bool, error) {
	if gotRef != wantRef {
		return false, refusal(fmt.Sprintf("binding %s exists but binds %s %s, not %s; delete it and run again", object, gotRef.Kind, gotRef.Name, wantRef.Name))
	}
	if reflect.DeepEqual(*got, want) {
		return false, nil
	}
	*got = want
	return true, nil
}
