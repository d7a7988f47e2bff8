package kube

import (
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"
)

// The Kubernetes API answers its calls itself; it never redirects them. client-go sends them through a plain
// http.Client (k8s.io/client-go rest/request.go: Request.request, Watch and Stream all call Client.Do), and Go's
// http.Client follows up to ten redirects by default: a 307 or 308 replays the request, body and method included,
// a 301, 302 or 303 turns it into a GET. Each request of the chain goes through client-go's transport again, which
// adds the credential (transport/round_trippers.go, bearerAuthRoundTripper: the token is set on every request
// that lacks an Authorization header) and presents the client certificate to whatever host answers: Go strips
// Authorization from a redirect to another host, but only a header set on the first request, not one a transport
// adds. A Harvester (or a proxy in front of it) that answered a dry run with a 307 to another address would thus
// get the create carried out there, without dryRun if the new URL drops it, with the credential.
//
// So the driver's one HTTP client (clientFor) follows no redirect. Its transport turns a redirect into an error
// (refuseRedirects, innermost: client-go applies rest.Config.WrapTransport before its own wrappers,
// transport/round_trippers.go HTTPWrappersForConfig), so http.Client never sees one, and reports it with the URL of
// the request sent — not the redirect's, which http.Client would put in its *url.Error. Behind it the client's
// CheckRedirect refuses any redirect all the same. Both run for every call, watches included, over HTTP/1.1 and
// HTTP/2 alike (the protocol is below the transport's RoundTrip).

// RedirectError is a redirect the driver refused to follow: Server, the API server the kubeconfig names, answered
// Status with a Location on host To (the redirect's host alone: its path and query may carry anything).
type RedirectError struct {
	Server string
	Status int
	To     string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("Harvester at %s answered with a redirect (%d %s) to host %s, which the driver does not follow: the Kubernetes API does not redirect its calls, "+
		"and following it would send the credential there. Check the kubeconfig's server address and any proxy in front of Harvester",
		e.Server, e.Status, http.StatusText(e.Status), e.To)
}

// maxRedirectHost bounds the host a redirect names in a message: a DNS name of 253 characters and a port.
const maxRedirectHost = 260

func redirectError(server string, status int, to *url.URL) *RedirectError {
	e := &RedirectError{Server: server, Status: status, To: "(none)"}
	if to != nil && to.Host != "" {
		e.To = to.Host
	}
	if len(e.To) > maxRedirectHost {
		e.To = e.To[:maxRedirectHost] + "…"
	}
	return e
}

// clientFor is the HTTP client of cfg that the driver's clients share: client-go's transport for cfg (TLS,
// credential, the wrappers of cfg.Wrap) as rest.HTTPClientFor builds it, refusing redirects. Unlike
// rest.HTTPClientFor it never returns http.DefaultClient, which the whole process shares.
func clientFor(cfg *rest.Config, server string) (*http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return redirectRefuser{next: next, server: server} })
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport, Timeout: cfg.Timeout,
		CheckRedirect: func(next *http.Request, _ []*http.Request) error {
			status := 0
			if next.Response != nil {
				status = next.Response.StatusCode
			}
			return redirectError(server, status, next.URL)
		}}, nil
}

// redirectRefuser fails a request answered with a redirect Go's http.Client would follow (a 3xx with a Location),
// closing the answer unread.
type redirectRefuser struct {
	next   http.RoundTripper
	server string
}

func (t redirectRefuser) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Header.Get("Location") == "" {
		return resp, err
	}
	to, _ := req.URL.Parse(resp.Header.Get("Location")) // relative to the request, as http.Client resolves it
	resp.Body.Close()
	return nil, redirectError(t.server, resp.StatusCode, to)
}
