package credential

import (
	"context"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	watchtools "k8s.io/client-go/tools/watch"
)

// Revoke deletes the token Secret and returns once the API server rejects the token (401).
//
// The rejection is polled, every 100 ms for up to 30 s: authentication has no watchable state, and
// kube-apiserver caches successful token authentications for about 10 s, so a revoked token keeps working for a
// few seconds after its Secret is gone, as it would on Harvester.
func (c *Credential) Revoke(ctx context.Context) error {
	err := c.admin.CoreV1().Secrets(c.Namespace).Delete(ctx, c.SecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete token Secret %s/%s: %w", c.Namespace, c.SecretName, err)
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll(ctx, fmt.Sprintf("the API server to reject the token of deleted Secret %s/%s", c.Namespace, c.SecretName),
		func(ctx context.Context) (bool, string, error) {
			ok, err := c.Authenticates(ctx)
			return !ok, fmt.Sprintf("token still authenticates (last error: %v)", err), nil
		})
}

// Authenticates reports whether the API server accepts the token (a SelfSubjectReview succeeds); a 401 is
// (false, nil), any other failure (false, err).
func (c *Credential) Authenticates(ctx context.Context) (bool, error) {
	cs, err := c.client()
	if err != nil {
		return false, err
	}
	_, err = cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsUnauthorized(err):
		return false, nil
	default:
		return false, err
	}
}

// waitBindings returns once RBAC grants the credential the first rule of each bound role, so a caller never
// sees the short window in which a fresh binding is not yet in the authorizer's cache. Polled: authorization
// has no watchable state.
func (c *Credential) waitBindings(ctx context.Context) error {
	cs, err := c.client()
	if err != nil {
		return err
	}
	check := func(role, namespace string) error {
		cr, err := c.admin.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read ClusterRole %s to check the binding: %w", role, err)
		}
		if len(cr.Rules) == 0 {
			return nil
		}
		attrs := attributesOf(cr.Rules[0], namespace)
		return poll(ctx, fmt.Sprintf("RBAC to grant %s/%s %s %s/%s (ClusterRole %s)", c.Namespace, c.Name, attrs.Verb, attrs.Group, attrs.Resource, role),
			func(ctx context.Context) (bool, string, error) {
				r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
					&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}},
					metav1.CreateOptions{})
				if err != nil {
					return false, err.Error(), nil
				}
				return r.Status.Allowed, "denied: " + r.Status.Reason, nil
			})
	}
	for _, role := range c.NamespaceRoles {
		if err := check(role, c.Namespace); err != nil {
			return err
		}
	}
	for _, role := range c.ClusterRoles {
		if err := check(role, ""); err != nil {
			return err
		}
	}
	return nil
}

// attributesOf turns a policy rule into one request it allows.
func attributesOf(rule rbacv1.PolicyRule, namespace string) *authorizationv1.ResourceAttributes {
	first := func(xs []string, wildcard string) string {
		if len(xs) == 0 || xs[0] == "*" {
			return wildcard
		}
		return xs[0]
	}
	resource, sub, _ := strings.Cut(first(rule.Resources, "configmaps"), "/")
	return &authorizationv1.ResourceAttributes{
		Namespace:   namespace,
		Verb:        first(rule.Verbs, "get"),
		Group:       first(rule.APIGroups, ""),
		Resource:    resource,
		Subresource: sub,
		Name:        first(rule.ResourceNames, ""),
	}
}

func (c *Credential) client() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// poll calls probe every 100 ms until it reports done or ctx ends; the error names what was awaited and the
// probe's last description of the state.
func poll(ctx context.Context, what string, probe func(context.Context) (done bool, state string, err error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		done, state, err := probe(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited for %s: %w; last: %s", what, ctx.Err(), state)
		case <-tick.C:
		}
	}
}
