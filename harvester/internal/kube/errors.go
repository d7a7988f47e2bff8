package kube

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
)

// IsGone reports whether err is the API server saying that this very object does not exist. A bare 404 is not
// enough: through Rancher's proxy an unknown or disconnected cluster also answers 404 ("clusters… not found"),
// and treating that as "the VM is gone" would leak the VM on remove. The status details must name the object
// (resource is the plural name, which the API server and client-go's fakes put in Details.Kind).
func IsGone(err error, resource, name string) bool {
	d := notFoundDetails(err)
	return d != nil && d.Name == name && d.Kind == resource
}

// IsMissing reports whether err is a 404 that names the object name (of any kind).
func IsMissing(err error, name string) bool {
	d := notFoundDetails(err)
	return d != nil && d.Name == name
}

// notFoundDetails returns the details of a 404, nil for other errors and for a 404 without details.
func notFoundDetails(err error) *metav1.StatusDetails {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return nil
	}
	return status.Status().Details
}

// IsTransient reports whether err is the API server saying it did not carry out a request now, where the same
// request may succeed later: its own timeout or a client's, too many requests, unavailable, or an internal
// error — which is what a webhook that could not be called, or did not answer in time, gives ("failed calling
// webhook", k8s.io/apiserver pkg/admission/plugin/webhook/errors). A loaded Harvester's webhooks do time out.
func IsTransient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
}

// MayHaveApplied reports whether a write that failed with err may have been carried out all the same: its answer
// did not arrive (a connection reset or timed out after the request was sent) or the server failed after it
// began (a 5xx: etcd's "request timed out" and the API server's own 504 come after the write may have landed).
// A 4xx is a refusal: nothing was written. The create's rollback then looks for what such a write made.
func MayHaveApplied(err error) bool {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return err != nil
	}
	return status.Status().Code >= 500 || status.Status().Code == 0
}

// TransientBackoff spaces the retries of a request that failed transiently (see IsTransient): 5 tries over about
// 8 s, besides what each try itself takes (a webhook's timeout is 10 s).
var TransientBackoff = wait.Backoff{Steps: 5, Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1}

// ConflictBackoff spaces the retries of an update that met a conflict (409) because another writer changed the
// object since it was read: 8 tries over about 5 s. A VM is written by KubeVirt's and Harvester's controllers
// several times in the seconds after its create (finalizers, status, KubeVirt's api-version annotations), which is
// when a failed create's rollback marks its volumes; client-go's retry.DefaultBackoff (4 tries over about 0.3 s)
// ran out there under load.
var ConflictBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.1}

// RetryTransient calls fn until it succeeds, fails other than transiently, or TransientBackoff's tries are spent.
// Only for a request that is safe to repeat (a precondition or resourceVersion makes a second try a no-op).
func RetryTransient(fn func() error) error {
	return retry.OnError(TransientBackoff, IsTransient, fn)
}

// Explain words a failed API call for a Rancher user: what was being done, on which object, why, and what to
// check. The last line a user sees must be enough on its own. A nil err stays nil.
func (c *Client) Explain(action, object string, err error) error {
	if err == nil {
		return nil
	}
	server := "Harvester"
	if c != nil && c.server != "" {
		server = "Harvester at " + c.server
	}
	var (
		netErr      net.Error
		tooLarge    *ResponseTooLargeError
		badQuantity *quantity.Error
		redirect    *RedirectError
	)
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("cannot %s %s: %v", action, object, tooLarge)
	case errors.As(err, &redirect):
		// Before net.Error: http.Client returns it in a *url.Error, which is one.
		return fmt.Errorf("cannot %s %s: %v", action, object, redirect)
	case errors.As(err, &badQuantity):
		// guard.go: an object with a quantity the driver will not parse, named with its field.
		return fmt.Errorf("cannot %s %s: %s sent %v; fix that object in Harvester", action, object, server, err)
	case apierrors.IsUnauthorized(err):
		renew := ""
		if c != nil && c.renew != "" {
			renew = ". " + c.renew
		}
		return fmt.Errorf("cannot %s %s: %s rejected the credential (401 Unauthorized): its token has probably expired or been revoked%s",
			action, object, server, renew)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("cannot %s %s: the credential is not allowed to (403 Forbidden: %s). Check the user's role in Harvester for this namespace",
			action, object, serverMessage(err))
	case apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err):
		return fmt.Errorf("cannot %s %s: %s is overloaded or slow (%s); try again", action, object, server, serverMessage(err))
	case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed calling webhook"):
		// k8s.io/apiserver pkg/admission/plugin/webhook/errors: the webhook could not be called or did not answer.
		return fmt.Errorf("cannot %s %s: an admission webhook of %s did not answer (%s); check the harvester-webhook pods in namespace harvester-system, then try again",
			action, object, server, serverMessage(err))
	case errors.As(err, &netErr) || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host"):
		return fmt.Errorf("cannot %s %s: %s is unreachable (%v). Check the kubeconfig's server address and, through Rancher, that the Harvester cluster is connected",
			action, object, server, err)
	case apierrors.IsNotFound(err) && !hasDetails(err):
		// A 404 for a path, not an object: the API (group) does not exist there.
		return fmt.Errorf("cannot %s %s: %s does not serve this API (404: %s). Check that the kubeconfig points at Harvester and not at another cluster",
			action, object, server, serverMessage(err))
	}
	return fmt.Errorf("cannot %s %s: %w", action, object, err)
}

func hasDetails(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name != ""
}

func serverMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

var notFoundPhrase = regexp.MustCompile(`(?i)not\s+found`)

// ScrubNotFound rewords "not found" in an error that is a real failure. rancher-machine's rm treats any Remove
// error containing "not found" (any case) as "already gone" and drops the machine — which would leak the VM when
// the real cause is, say, a kubeconfig context that does not exist.
func ScrubNotFound(err error) error {
	if err == nil || !notFoundPhrase.MatchString(err.Error()) {
		return err
	}
	return errors.New(notFoundPhrase.ReplaceAllString(err.Error(), "missing"))
}
