package harvester

import (
	"context"
	"fmt"
	"net"
	"reflect"
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
)

// What a guest cluster's Harvester cloud provider (CCM) and CSI driver need from Harvester, the way Harvester's
// own POST /v1/harvester/kubeconfig makes it (pkg/api/kubeconfig/generate_handler.go): same object names, so
// the account Rancher's UI generates and the one this driver generates are one and the same.
const (
	clusterRoleCloudProvider = "harvesterhci.io:cloudprovider"
	clusterRoleCSIDriver     = "harvesterhci.io:csi-driver"
	harvesterSystemNamespace = "harvester-system"
	vipConfigMapName         = "vip" // data.ip: the cluster's virtual IP, which the guests can reach
	harvesterAPIPort         = "6443"
	tokenWaitTimeout         = 30 * time.Second
)

// CloudProviderAccount names the scoped identity of one guest cluster.
type CloudProviderAccount struct {
	// Namespace is the guest cluster's VM namespace; the identity may act in it only.
	Namespace string
	// ServiceAccount names the identity; Harvester's UI uses the guest cluster's name.
	ServiceAccount string
	// Server is Harvester's API as the guests reach it, https://<VIP>:6443; empty to discover it from
	// Harvester's vip ConfigMap. A Rancher proxy URL (/k8s/clusters/…) is refused: a token of Harvester's
	// service account means nothing to Rancher.
	Server string
}

func (a CloudProviderAccount) check() error {
	var errs []string
	if msgs := validation.IsDNS1123Label(a.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Sprintf("namespace %q is not a namespace name", a.Namespace))
	}
	if msgs := validation.IsDNS1123Subdomain(a.ServiceAccount); len(msgs) > 0 {
		errs = append(errs, fmt.Sprintf("service account name %q is not a valid name (lowercase letters, digits, '-', '.')", a.ServiceAccount))
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

// cloudProviderAccess is what ensureCloudProviderAccount needs besides the token wait (tokenAccess). The
// ClusterRoleBinding is asked without a namespace: a RoleBinding cannot grant it.
var cloudProviderAccess = []kube.Access{
	{Resource: "serviceaccounts", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "clusterrolebindings", Verb: "create", ClusterScoped: true},
}

// EnsureCloudProviderAccount connects to Harvester with kubeconfig (nil: $KUBECONFIG or ~/.kube/config) and
// makes the guest cluster's account there (see ensureCloudProviderAccount). It replaces
// harvester/cloud-provider-harvester's generate_addon.sh; the cloud-provider-config subcommand runs it.
func EnsureCloudProviderAccount(ctx context.Context, kubeconfig []byte, a CloudProviderAccount) ([]byte, error) {
	c, _, err := connect(kubeconfig, time.Now())
	if err != nil {
		return nil, err
	}
	return ensureCloudProviderAccount(ctx, c, a)
}

// CloudProviderCloudConfig renders a #cloud-config that writes a cloud provider kubeconfig to the guest's
// cloud provider paths for a distribution (see LookupDistribution), as the driver writes it (with dropIn, also the
// distribution's drop-in that turns the Harvester cloud provider on): a snippet for user data written by hand.
func CloudProviderCloudConfig(kubeconfig []byte, dist config.Distribution, dropIn bool) ([]byte, error) {
	return cloudinit.WriteFilesConfig(config.CloudProviderFiles(kubeconfig, dist, dropIn))
}

// ensureCloudProviderAccount makes, idempotently, the guest cluster's identity in Harvester — ServiceAccount,
// its token Secret, a RoleBinding to harvesterhci.io:cloudprovider in the namespace and a ClusterRoleBinding
// to harvesterhci.io:csi-driver — waits for the token and returns a kubeconfig for it: Harvester's VIP as
// server, the CA embedded, the namespace as context namespace. Running it again changes nothing.
func ensureCloudProviderAccount(ctx context.Context, c kube.Interface, a CloudProviderAccount) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	ns, name := a.Namespace, a.ServiceAccount
	if _, err := kube.Get(ctx, c, kube.Namespaces, "", ns); err != nil {
		if kube.IsGone(err, "namespaces", ns) {
			return nil, fmt.Errorf("namespace %s does not exist in Harvester", ns)
		}
		return nil, c.Explain("read namespace", ns, err)
	}
	for _, role := range []string{clusterRoleCloudProvider, clusterRoleCSIDriver} {
		if _, err := kube.Get(ctx, c, kube.ClusterRoles, "", role); err != nil {
			if kube.IsGone(err, "clusterroles", role) {
				return nil, fmt.Errorf("ClusterRole %s does not exist: is this Harvester (v1.1 or later)?", role)
			}
			return nil, c.Explain("read ClusterRole", role, err)
		}
	}
	server := a.Server
	if server == "" {
		var err error
		if server, err = discoverVIP(ctx, c); err != nil {
			return nil, err
		}
	}

	sa, err := kube.CreateOrGet(ctx, c, kube.ServiceAccounts, ns, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	if err != nil {
		return nil, c.Explain("create ServiceAccount", ns+"/"+name, err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}
	bindingName := ns + "-" + name
	if err := ensureBinding(ctx, c, kube.RoleBindings, ns, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName, Namespace: ns, OwnerReferences: []metav1.OwnerReference{saOwner(sa)}},
		Subjects:   subject,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRoleCloudProvider},
	}, func(rb *rbacv1.RoleBinding) (*[]rbacv1.Subject, rbacv1.RoleRef) { return &rb.Subjects, rb.RoleRef }); err != nil {
		return nil, c.Explain("bind the cloud provider role to", ns+"/"+name, err)
	}
	if err := ensureBinding(ctx, c, kube.ClusterRoleBindings, "", &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName, OwnerReferences: []metav1.OwnerReference{saOwner(sa)}},
		Subjects:   subject,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRoleCSIDriver},
	}, func(rb *rbacv1.ClusterRoleBinding) (*[]rbacv1.Subject, rbacv1.RoleRef) {
		return &rb.Subjects, rb.RoleRef
	}); err != nil {
		return nil, c.Explain("bind the CSI driver role to", ns+"/"+name, err)
	}
	// Since Kubernetes 1.24 a token Secret must be asked for; kube-controller-manager fills it in.
	tokenName := name + "-token"
	_, err = kube.CreateOrGet(ctx, c, kube.Secrets, ns, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: tokenName, Namespace: ns,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: name}, OwnerReferences: []metav1.OwnerReference{saOwner(sa)}},
		Type: corev1.SecretTypeServiceAccountToken,
	})
	if err != nil {
		return nil, c.Explain("create the token Secret", ns+"/"+tokenName, err)
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

// ensureBinding creates a (Cluster)RoleBinding, or makes an existing one include the subject. A binding of that
// name to another role is an error: a roleRef cannot be changed.
func ensureBinding[T any](ctx context.Context, c kube.Interface, k kube.Kind[T], ns string, want *T, parts func(*T) (*[]rbacv1.Subject, rbacv1.RoleRef)) error {
	got, err := kube.CreateOrGet(ctx, c, k, ns, want)
	if err != nil {
		return err
	}
	gotSubjects, gotRef := parts(got)
	wantSubjects, wantRef := parts(want)
	if gotRef != wantRef {
		u, _ := kube.ToUnstructured(k, got)
		return fmt.Errorf("%s %s exists but binds %s %s, not %s; delete it and run again", u.GetKind(), u.GetName(), gotRef.Kind, gotRef.Name, wantRef.Name)
	}
	for _, s := range *gotSubjects {
		if reflect.DeepEqual(s, (*wantSubjects)[0]) {
			return nil
		}
	}
	*gotSubjects = append(*gotSubjects, (*wantSubjects)[0])
	_, err = kube.Update(ctx, c, k, ns, got)
	return err
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
