package harvester

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

const (
	harvesterSystemNamespace = "harvester-system"
	vipConfigMapName         = "vip" // data.ip: the cluster's virtual IP, which the guests can reach
	harvesterAPIPort         = "6443"
	tokenWaitTimeout         = 30 * time.Second
)

// What a guest cluster's Harvester cloud provider (harvester/cloud-provider-harvester) and CSI driver
// (harvester/harvester-csi-driver) call on Harvester, and no more: the README's table "What the guest's account
// may do" lists the same rows with the upstream caller. Harvester's own kubeconfig endpoint binds its ClusterRoles
// harvesterhci.io:cloudprovider in the namespace and harvesterhci.io:csi-driver cluster-wide
// (pkg/api/kubeconfig/generate_handler.go, deploy/charts/harvester/templates/rbac.yaml); the driver binds its own
// roles instead, which allow these calls in the guest cluster's VM namespace only.
var (
	// guestRules go in a Role in the VM namespace, the namespace of the kubeconfig's context, which both the
	// cloud provider (pkg/cloud-controller-manager/ccm.go) and the CSI driver (pkg/csi/manager.go) act in.
	guestRules = []rbacv1.PolicyRule{
		// CCM pkg/cloud-controller-manager/loadbalancer.go; list and watch for CCM v0.1.x, which watched its
		// load balancer (loadBalancer.go).
		rule("loadbalancer.harvesterhci.io", "loadbalancers", "get", "list", "watch", "create", "update", "delete"),
		// CCM instance.go getVM; CSI pkg/csi/controller_server.go and pkg/controller/node/controller.go: patch
		// is the declarative volume hotplug of Harvester 1.8 and later.
		rule("kubevirt.io", "virtualmachines", "get", "patch"),
		// CCM instance.go and the VMI controller's informer (pkg/controller/virtualmachineinstance); CSI
		// manager.go discoverVMIName, controller_server.go, node_server.go.
		rule("kubevirt.io", "virtualmachineinstances", "get", "list", "watch"),
		// CSI controller_server.go, node/controller.go: the volume hotplug of Harvester before 1.8.
		rule("subresources.kubevirt.io", "virtualmachines/addvolume", "update"),
		rule("subresources.kubevirt.io", "virtualmachines/removevolume", "update"),
		rule("subresources.kubevirt.io", "virtualmachineinstances/removevolume", "update"),
		// CCM pkg/controller/virtualmachineinstance/controller.go OnVmiChanged.
		rule("subresources.kubevirt.io", "virtualmachineinstances/guestosinfo", "get"),
		// CSI controller_server.go, node_server.go: the guest's volumes are claims in the VM namespace.
		rule("", "persistentvolumeclaims", "get", "create", "update", "delete"),
		// CSI controller_server.go isVolumeInUse.
		rule("", "pods", "list"),
		// CSI controller_server.go: snapshots of the guest's volumes.
		rule("snapshot.storage.k8s.io", "volumesnapshots", "get", "list", "create", "delete"),
		// CSI controller_server.go: backups and restores (Harvester 1.8 and later).
		rule("harvesterhci.io", "volumeremotebackups", "get", "create", "delete"),
		rule("harvesterhci.io", "volumeremoterestores", "get", "create", "delete"),
	}
	// networkFilesystemRules go in a Role in harvester-system, where the CSI driver keeps the NetworkFilesystems
	// of Longhorn RWX volumes (controller_server.go: NewControllerServer lists them and offers RWX volumes only
	// when it may; createNetworkFilesystem, publishRWXVolume, DeleteVolume; node_server.go nodeStageRWXVolume).
	// Their names are volume names, not known in advance: the account may touch any guest's NetworkFilesystem.
	networkFilesystemRules = []rbacv1.PolicyRule{
		rule("harvesterhci.io", "networkfilesystems", "get", "list", "create", "update", "delete"),
	}
	// guestClusterRules go in a ClusterRole: cluster-scoped reads.
	guestClusterRules = []rbacv1.PolicyRule{
		// CSI controller_server.go: validStorageClass, getHostSC (RWX), buildHostPVCFromSnap.
		rule("storage.k8s.io", "storageclasses", "get"),
		// CSI controller_server.go waitForVASettled: without it a block volume still attached to another host
		// is not waited for.
		rule("storage.k8s.io", "volumeattachments", "list"),
		// CSI manager.go Run (server-version; it stops without it: Harvester's harvester-authenticated role
		// grants it only from Harvester 1.4), controller_server.go getHarvCSIConfig (csi-driver-config) and
		// validateOnlineExpansion, node_server.go NodeExpandVolume (csi-online-expand-validation).
		{APIGroups: []string{"harvesterhci.io"}, Resources: []string{"settings"}, Verbs: []string{"get"},
			ResourceNames: []string{"csi-driver-config", "csi-online-expand-validation", "server-version"}},
	}
)

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// CloudProviderAccount names the scoped identity of one guest cluster.
type CloudProviderAccount struct {
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

func (a CloudProviderAccount) account() string {
	if a.ServiceAccount != "" {
		return a.ServiceAccount
	}
	return config.CloudProviderAccountName(a.Cluster)
}

// labels are the driver's mark on every object of the account; an object of the same name without them is
// someone else's and is neither used nor changed.
func (a CloudProviderAccount) labels() map[string]string {
	return map[string]string{config.LabelCreator: config.CreatorName, config.LabelGuestCluster: config.LabelValue(a.Cluster)}
}

// sharedName names the account's objects outside its namespace (in harvester-system and cluster-scoped), which
// the accounts of every VM namespace share: "<namespace>:<account>", a ':' being in neither name.
func (a CloudProviderAccount) sharedName() string { return a.Namespace + ":" + a.account() }

func (a CloudProviderAccount) check() error {
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
		return fmt.Errorf("cloud provider account: %s", strings.Join(errs, "; "))
	}
	return nil
}

// cloudProviderAccess is what ensureCloudProviderAccount needs besides the token wait (tokenAccess): making and
// reading the objects, and — RBAC's escalation check — every permission its roles grant, where they grant it.
var cloudProviderAccess = slices.Concat([]kube.Access{
	{Resource: "serviceaccounts", Verb: "create"},
	{Resource: "serviceaccounts", Verb: "get"},
	{Resource: "secrets", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "get"},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "get"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "create", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "get", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "create", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "get", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "clusterroles", Verb: "create", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterroles", Verb: "get", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterrolebindings", Verb: "create", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterrolebindings", Verb: "get", ClusterScoped: true},
}, ruleAccess(guestRules, "", false), ruleAccess(networkFilesystemRules, harvesterSystemNamespace, false), ruleAccess(guestClusterRules, "", true))

// ruleAccess lists what rules grant, one question per verb, resource and name.
func ruleAccess(rules []rbacv1.PolicyRule, ns string, clusterScoped bool) []kube.Access {
	var out []kube.Access
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, kube.Access{Group: g, Resource: res, Verb: v, Name: n, Namespace: ns, ClusterScoped: clusterScoped})
					}
				}
			}
		}
	}
	return out
}

// EnsureCloudProviderAccount connects to Harvester with cred (see Credential) and makes the guest cluster's
// account there (see ensureCloudProviderAccount). It replaces harvester/cloud-provider-harvester's
// generate_addon.sh; the cloud-provider-config subcommand runs it.
func EnsureCloudProviderAccount(ctx context.Context, cred Credential, a CloudProviderAccount) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	c, _, err := connect(cred, time.Now())
	if err != nil {
		return nil, err
	}
	return ensureCloudProviderAccount(ctx, c, a)
}

// CloudProviderCloudConfig renders a #cloud-config that writes a cloud provider kubeconfig to the guest's
// cloud provider paths for a distribution (see LookupDistribution), as the driver writes it (with dropIn, also the
// distribution's drop-in that turns the Harvester cloud provider on): a snippet for user data written by hand.
func CloudProviderCloudConfig(kubeconfig []byte, dist config.Distribution, dropIn bool) ([]byte, error) {
	return cloudinit.WriteFilesConfig(objects.CloudProviderFiles(kubeconfig, dist, dropIn))
}

// ensureCloudProviderAccount makes, idempotently, the guest cluster's identity in Harvester, every object
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
func ensureCloudProviderAccount(ctx context.Context, c kube.Interface, a CloudProviderAccount) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	ns, name, labels := a.Namespace, a.account(), a.labels()
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

// discoverVIP reads Harvester's virtual IP the way Harvester's kubeconfig endpoint does.
func discoverVIP(ctx context.Context, c kube.Interface) (string, error) {
	cm, err := kube.Get(ctx, c, kube.ConfigMaps, harvesterSystemNamespace, vipConfigMapName)
	if err != nil {
		return "", fmt.Errorf("cannot discover Harvester's VIP from ConfigMap %s/%s (%v); give the server as https://<Harvester VIP>:6443",
			harvesterSystemNamespace, vipConfigMapName, scrubNotFound(c.Explain("read ConfigMap", harvesterSystemNamespace+"/"+vipConfigMapName, err)))
	}
	ip := cm.Data["ip"]
	if parsed := net.ParseIP(ip); parsed == nil || parsed.IsUnspecified() {
		return "", fmt.Errorf("Harvester's vip ConfigMap holds no usable IP (%q); give the server as https://<Harvester VIP>:6443", ip)
	}
	return "https://" + net.JoinHostPort(ip, harvesterAPIPort), nil
}

// tokenAccess is what waitForToken needs.
var tokenAccess = kube.WaitForSecretAccess

// waitForToken waits until kube-controller-manager has filled the token Secret in, within a deadline (see
// kube.WaitForSecret: a read, then client-go's watch.UntilWithSync from there).
func waitForToken(ctx context.Context, c kube.Interface, ns, name string) (ca, token []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, tokenWaitTimeout)
	defer cancel()
	s, err := c.WaitForSecret(ctx, ns, name, filled)
	switch {
	case err == nil:
		return s.Data["ca.crt"], s.Data["token"], nil
	case ctx.Err() != nil:
		return nil, nil, fmt.Errorf("the token Secret %s/%s was not filled in within %s: is Harvester's kube-controller-manager running?", ns, name, tokenWaitTimeout)
	}
	return nil, nil, c.Explain("read the token Secret", ns+"/"+name, err)
}

func filled(s *corev1.Secret) bool { return len(s.Data["ca.crt"]) > 0 && len(s.Data["token"]) > 0 }

// accountKubeconfig renders the guest cluster's kubeconfig (names as Harvester's endpoint writes them).
func accountKubeconfig(server, namespace string, ca, token []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["default"] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "default", AuthInfo: "default", Namespace: namespace}
	cfg.CurrentContext = "default"
	return clientcmd.Write(*cfg)
}
