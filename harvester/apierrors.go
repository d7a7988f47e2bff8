package harvester

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// isGone reports whether err is the API server saying that this very object does not exist. A bare 404 is not
// enough: through Rancher's proxy an unknown or disconnected cluster also answers 404 ("clusters… not found"),
// and treating that as "the VM is gone" would leak the VM on remove. The status details must name the object.
func isGone(err error, resource, name string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	// The API server (and client-go's fakes) put the plural resource name in Details.Kind.
	return d != nil && d.Name == name && d.Kind == resource
}

// isMissing reports whether err is a 404 that names the object name (of any kind).
func isMissing(err error, name string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name == name
}

// apiError explains a failed API call to a Rancher user: what was being done, on which object, why, and what to
// check. The last line a user sees must be enough on its own.
func apiError(c *clients, action, object string, err error) error {
	if err == nil {
		return nil
	}
	server := "Harvester"
	if c != nil && c.server != "" {
		server = "Harvester at " + c.server
	}
	var netErr net.Error
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("cannot %s %s: %s rejected the credential (401 Unauthorized): its token has probably expired or been revoked. "+
			"Renew it: in Rancher, update the Harvester cloud credential; with rancher-machine, pass a current kubeconfig with --%s or $KUBECONFIG",
			action, object, server, FlagKubeconfigContent)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("cannot %s %s: the credential is not allowed to (403 Forbidden: %s). Check the user's role in Harvester for this namespace",
			action, object, serverMessage(err))
	case apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err):
		return fmt.Errorf("cannot %s %s: %s is overloaded or slow (%s); try again", action, object, server, serverMessage(err))
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

// scrubNotFound rewords "not found" in an error that is a real failure. rancher-machine's rm treats any Remove
// error containing "not found" (any case) as "already gone" and drops the machine — which would leak the VM when
// the real cause is, say, a kubeconfig context that does not exist.
func scrubNotFound(err error) error {
	if err == nil || !notFoundPhrase.MatchString(err.Error()) {
		return err
	}
	return errors.New(notFoundPhrase.ReplaceAllString(err.Error(), "missing"))
}
