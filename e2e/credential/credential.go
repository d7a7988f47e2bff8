// Package credential hands out restricted identities the way Harvester's POST /v1/harvester/kubeconfig does
// (harvester/harvester pkg/api/kubeconfig/generate_handler.go): a ServiceAccount, a kubernetes.io/service-account-token Secret that kube-controller-manager
// fills, RBAC bindings to ClusterRoles, and a kubeconfig with the token. Deleting the Secret revokes the token,
// which is how the tests rotate credentials.
package credential

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/harvester/docker-machine-driver-harvester/e2e/await"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/kubeconfig"
)

// Spec describes one identity.
type Spec struct {
	Namespace string // of the ServiceAccount, its token Secret and the RoleBindings; the kubeconfig's namespace
	Name      string // of the ServiceAccount
	// SecretName of the token Secret; empty means "<Name>-token" (Harvester's name). Issue a second Secret
	// under another name to rotate: the old token stays valid until it is revoked.
	SecretName string
	// NamespaceRoles are ClusterRoles bound in Namespace by RoleBindings.
	NamespaceRoles []string
	// ClusterRoles are ClusterRoles bound cluster-wide by ClusterRoleBindings.
	ClusterRoles []string
}

// CloudProvider returns the Spec Harvester's kubeconfig endpoint uses for a guest cluster's cloud provider:
// harvesterhci.io:cloudprovider bound in the VM namespace, harvesterhci.io:csi-driver bound cluster-wide.
func CloudProvider(namespace, name string) Spec {
	return Spec{
		Namespace:      namespace,
		Name:           name,
		NamespaceRoles: []string{"harvesterhci.io:cloudprovider"},
		ClusterRoles:   []string{"harvesterhci.io:csi-driver"},
	}
}

// Credential is an issued identity.
type Credential struct {
	Spec
	Token      string // the service-account token (a JWT)
	Kubeconfig []byte // cluster, user and context "default"; server = the admin config's host; CA embedded

	admin  kubernetes.Interface
	server string
	ca     []byte
}

// Issue creates (or updates) the ServiceAccount, token Secret and bindings of spec, waits by watch until
// kube-controller-manager has put a token and ca.crt into the Secret, waits until the bindings are in force,
// and returns the credential. The server URL is admin's.
func Issue(ctx context.Context, admin *rest.Config, spec Spec) (*Credential, error) {
	if spec.SecretName == "" {
		spec.SecretName = spec.Name + "-token"
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, 60*time.Second)
	defer cancel()

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Namespace: spec.Namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(spec.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create ServiceAccount %s/%s: %w", spec.Namespace, spec.Name, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        spec.SecretName,
			Namespace:   spec.Namespace,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: spec.Name},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := cs.CoreV1().Secrets(spec.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create token Secret %s/%s: %w", spec.Namespace, spec.SecretName, err)
	}
	secrets := cs.CoreV1().Secrets(spec.Namespace)
	filled, err := await.Object(ctx, await.ByName(spec.SecretName, secrets.List, secrets.Watch),
		fmt.Sprintf("kube-controller-manager to fill token Secret %s/%s", spec.Namespace, spec.SecretName),
		func(s *corev1.Secret, exists bool) bool {
			return exists && len(s.Data[corev1.ServiceAccountTokenKey]) > 0 && len(s.Data[corev1.ServiceAccountRootCAKey]) > 0
		},
		func(s *corev1.Secret) string { return fmt.Sprintf("Secret with keys %v", keys(s.Data)) })
	if err != nil {
		return nil, fmt.Errorf("%w (is kube-controller-manager running with the serviceaccount-token controller?)", err)
	}

	if err := bind(ctx, cs, spec); err != nil {
		return nil, err
	}
	token := string(filled.Data[corev1.ServiceAccountTokenKey])
	kc, err := kubeconfig.Token(admin.Host, filled.Data[corev1.ServiceAccountRootCAKey], token, spec.Namespace)
	if err != nil {
		return nil, err
	}
	c := &Credential{Spec: spec, Token: token, Kubeconfig: kc, admin: cs, server: admin.Host, ca: filled.Data[corev1.ServiceAccountRootCAKey]}
	if err := c.waitBindings(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Expiring returns the same identity with a bound token (TokenRequest) that expires after expiresIn, as the
// tokens of Harvester's newer credentials do; its kubeconfig carries that token.
func (c *Credential) Expiring(ctx context.Context, expiresIn time.Duration) (*Credential, error) {
	seconds := int64(expiresIn / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	got, err := c.admin.CoreV1().ServiceAccounts(c.Namespace).CreateToken(ctx, c.Name, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for ServiceAccount %s/%s: %w", c.Namespace, c.Name, err)
	}
	kc, err := kubeconfig.Token(c.server, c.ca, got.Status.Token, c.Namespace)
	if err != nil {
		return nil, err
	}
	expiring := *c
	expiring.Token, expiring.Kubeconfig = got.Status.Token, kc
	return &expiring, nil
}

// RESTConfig returns a client configuration for the credential.
func (c *Credential) RESTConfig() (*rest.Config, error) { return kubeconfig.RESTConfig(c.Kubeconfig) }

// bind creates one RoleBinding per namespace role and one ClusterRoleBinding per cluster role. The first of each
// is called "<namespace>-<name>", as Harvester names them; further ones get "-<index>".
func bind(ctx context.Context, cs kubernetes.Interface, spec Spec) error {
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: spec.Name, Namespace: spec.Namespace}}
	for i, role := range spec.NamespaceRoles {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindingName(spec, i), Namespace: spec.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subject,
		}
		if _, err := cs.RbacV1().RoleBindings(spec.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bind ClusterRole %s in namespace %s: %w", role, spec.Namespace, err)
		}
	}
	for i, role := range spec.ClusterRoles {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindingName(spec, i)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subject,
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bind ClusterRole %s cluster-wide: %w", role, err)
		}
	}
	return nil
}

func bindingName(spec Spec, i int) string {
	if i == 0 {
		return spec.Namespace + "-" + spec.Name
	}
	return fmt.Sprintf("%s-%s-%d", spec.Namespace, spec.Name, i)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
