package kube

import (
	"context"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// Access is one permission: a verb on a resource of an API group ("" for the core group).
type Access struct {
	Group string `json:"group,omitempty"`
	// Resource may name a subresource as "resource/subresource", as RBAC rules do.
	Resource string `json:"resource"`
	Verb     string `json:"verb"`
	// Name narrows the question to one object (what a rule with resourceNames grants).
	Name string `json:"name,omitempty"`
	// Namespace, when set, is asked instead of the namespace given to Denied.
	Namespace string `json:"namespace,omitempty"`
	// ClusterScoped is asked without a namespace: a RoleBinding cannot grant it.
	ClusterScoped bool `json:"clusterScoped,omitempty"`
}

func (a Access) String() string {
	s := a.Verb + " " + a.Resource
	if a.Name != "" {
		s += " " + a.Name
	}
	if a.Namespace != "" && !a.ClusterScoped {
		s += " in namespace " + a.Namespace
	}
	return s
}

// Denied answers which of needed the credential may not do in namespace, in the order of needed, with one
// SelfSubjectRulesReview per namespace involved (the namespace, and each Access.Namespace), sent concurrently.
//
// A rules review lists the rules of the RoleBindings in its namespace and of every ClusterRoleBinding
// (authorization.k8s.io/v1 SelfSubjectRulesReview), so it also answers a cluster-scoped access — but only one
// way: what its rules do not grant is denied, while a grant may come from a RoleBinding, which cannot grant a
// cluster-scoped resource. Cluster-scoped accesses the rules grant are therefore confirmed with
// SelfSubjectAccessReviews, as is everything in a namespace whose review the server answers incomplete (an
// authorizer that cannot list rules, such as a webhook). It fails with a failed review.
func (c *Client) Denied(ctx context.Context, namespace string, needed []Access) ([]Access, error) {
	namespaces := []string{}
	for _, a := range needed {
		if ns := reviewNamespace(namespace, a); !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	reviews := make([]*authorizationv1.SelfSubjectRulesReview, len(namespaces))
	if err := concurrently(len(namespaces), func(i int) error {
		var err error
		reviews[i], err = Create(ctx, c, RulesReviews, "", &authorizationv1.SelfSubjectRulesReview{
			Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespaces[i]},
		})
		return err
	}); err != nil {
		return nil, err
	}
	allowed := make([]bool, len(needed))
	var ask []int // what the rules cannot settle: the access reviews' questions
	for i, a := range needed {
		status := reviews[slices.Index(namespaces, reviewNamespace(namespace, a))].Status
		switch {
		case status.Incomplete:
			ask = append(ask, i)
		case !RulesAllow(status.ResourceRules, a):
		case a.ClusterScoped:
			ask = append(ask, i)
		default:
			allowed[i] = true
		}
	}
	if err := concurrently(len(ask), func(j int) error {
		ok, err := c.accessReview(ctx, namespace, needed[ask[j]])
		allowed[ask[j]] = ok
		return err
	}); err != nil {
		return nil, err
	}
	var denied []Access
	for i, a := range needed {
		if !allowed[i] {
			denied = append(denied, a)
		}
	}
	return denied, nil
}

// reviewNamespace is the namespace whose rules review answers a: a cluster-scoped access is answered by the
// namespace's, whose rules include every ClusterRoleBinding's.
func reviewNamespace(namespace string, a Access) string {
	if a.Namespace != "" && !a.ClusterScoped {
		return a.Namespace
	}
	return namespace
}

// accessReview asks the API server about a with a SelfSubjectAccessReview.
func (c *Client) accessReview(ctx context.Context, namespace string, a Access) (bool, error) {
	ns := namespace
	switch {
	case a.ClusterScoped:
		ns = ""
	case a.Namespace != "":
		ns = a.Namespace
	}
	resource, sub, _ := strings.Cut(a.Resource, "/")
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: a.Group, Resource: resource, Subresource: sub, Verb: a.Verb, Name: a.Name},
	}}
	res, err := Create(ctx, c, AccessReviews, "", review)
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}

// concurrently runs f(0) … f(n-1) at once and returns one of their errors.
func concurrently(n int, f func(i int) error) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i); err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// RulesAllow reports whether some rule grants a, as RBAC matches a request against a PolicyRule
// (kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches, ResourceMatches,
// ResourceNameMatches): "*" matches any verb, group or resource, "*/sub" any resource's subresource sub, and a
// rule with resourceNames grants only requests that name one of them — never a create or a list.
func RulesAllow(rules []authorizationv1.ResourceRule, a Access) bool {
	_, sub, _ := strings.Cut(a.Resource, "/")
	for _, r := range rules {
		if matches(r.Verbs, a.Verb) && matches(r.APIGroups, a.Group) && resourceMatches(r.Resources, a.Resource, sub) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name) && a.Name != "") {
			return true
		}
	}
	return false
}

func matches(granted []string, want string) bool {
	return slices.Contains(granted, "*") || slices.Contains(granted, want)
}

func resourceMatches(granted []string, resource, sub string) bool {
	for _, g := range granted {
		if g == "*" || g == resource || sub != "" && g == "*/"+sub {
			return true
		}
	}
	return false
}
