package configtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// RedirectQuery is in the query of every redirect a Redirector answers: a message that quoted the redirect's URL
// would show it.
const RedirectQuery = "planted=Q9xw2Lr7Vb4Nc1Zt6Hy3"

// Redirector is a TLS API server that answers every request with a redirect to Target, another server, which
// records whatever reaches it: a Harvester, or a proxy in front of it, sending the driver's calls elsewhere.
// Writes (POST, PUT, PATCH, DELETE) get a 307, which makes Go's http.Client replay the request with its body, and
// reads a 302; the redirect's URL keeps the path and drops the query (dryRun=All of a dry run among it).
type Redirector struct {
	*httptest.Server
	Target *Recorder
	asked  atomic.Int64
	http2  atomic.Bool
}

// NewRedirector starts a Redirector and its Target for the test's duration.
func NewRedirector(t *testing.T) *Redirector { return newRedirector(t, false) }

// NewHTTP2Redirector is NewRedirector speaking HTTP/2 (to a client that offers it, as client-go's does).
func NewHTTP2Redirector(t *testing.T) *Redirector { return newRedirector(t, true) }

func newRedirector(t *testing.T, http2 bool) *Redirector {
	r := &Redirector{Target: NewRecorder(t)}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.asked.Add(1)
		r.http2.Store(req.ProtoMajor == 2)
		to, err := url.Parse(r.Target.URL + req.URL.Path + "?" + RedirectQuery)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		code := http.StatusFound
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(w, req, to.String(), code)
	}))
	r.EnableHTTP2 = http2
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

// HTTP2 reports whether the last request reached the Redirector over HTTP/2.
func (r *Redirector) HTTP2() bool { return r.http2.Load() }

// Asked is how many requests reached the Redirector.
func (r *Redirector) Asked() int64 { return r.asked.Load() }

// Host is the Redirector's host:port, as messages name the API server.
func (r *Redirector) Host() string { return r.Listener.Addr().String() }

// TargetHost is the host:port the redirects name.
func (r *Redirector) TargetHost() string { return r.Target.Listener.Addr().String() }

// Kubeconfig is a content kubeconfig for the Redirector with an inline token.
func (r *Redirector) Kubeconfig(token string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "` + r.URL + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: "` + token + `"}}]
contexts: [{name: h, context: {cluster: h, user: u, namespace: default}}]
current-context: h
`
}

// WantRefused fails t unless err is the driver's refusal of the redirect, naming the Redirector and the Target's
// host and quoting neither the redirect's query nor secret, and nothing reached the Target.
func (r *Redirector) WantRefused(t *testing.T, err error, secret string) {
	t.Helper()
	switch msg := fmt.Sprint(err); {
	case err == nil:
		t.Error("the call succeeded through the redirect")
	case !strings.Contains(msg, "Harvester at "+r.Host()+" answered with a redirect") ||
		!strings.Contains(msg, "to host "+r.TargetHost()+", which the driver does not follow"):
		t.Errorf("want the redirect refused, naming %s and %s, got %v", r.Host(), r.TargetHost(), err)
	case strings.Contains(msg, RedirectQuery) || (secret != "" && strings.Contains(msg, secret)):
		t.Errorf("the message quotes the redirect's query or the credential: %v", err)
	}
	if seen := r.Target.Seen(); len(seen) != 0 {
		t.Errorf("%d requests reached the redirect's target (Authorization %q)", len(seen), seen)
	}
	if r.Asked() == 0 {
		t.Error("no request reached the API server")
	}
}
