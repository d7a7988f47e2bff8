package kube

import (
	"context"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// Access is one permission: a verb on a resource of an API group ("" for the core group).
type Access struct {
	Group, Resource, Verb string
	// Name narrows the question to one object (what a rule with resourceNames grants).
	Name string
	// Namespace, when set, is asked instead of the namespace given to Denied.
	Namespace string
	// ClusterScoped is asked without a namespace: a RoleBinding cannot grant it.
	ClusterScoped bool
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

// Denied asks the API server, with SelfSubjectAccessReviews sent concurrently, which of needed the credential
// may not do in namespace, in the order of needed. It fails with a failed review.
func (c *Client) Denied(ctx context.Context, namespace string, needed []Access) ([]Access, error) {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed error
	)
	allowed := make([]bool, len(needed))
	for i, a := range needed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := namespace
			switch {
			case a.ClusterScoped:
				ns = ""
			case a.Namespace != "":
				ns = a.Namespace
			}
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: a.Group, Resource: a.Resource, Verb: a.Verb, Name: a.Name},
			}}
			res, err := Create(ctx, c, AccessReviews, "", review)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failed = err
			default:
				allowed[i] = res.Status.Allowed
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	var denied []Access
	for i, a := range needed {
		if !allowed[i] {
			denied = append(denied, a)
		}
	}
	return denied, nil
}
