package configtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// ExecKubeconfig is a kubeconfig for server whose user gets its token from a shell command that writes marker.
func ExecKubeconfig(server, marker string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh,
  args: [-c, "touch %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'"]}}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, server, marker)
}

// Recorder is a TLS API server (client-go sends a user's credential only over TLS) that answers 404 and keeps the
// Authorization header of each request.
type Recorder struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

// NewRecorder starts a Recorder for the test's duration.
func NewRecorder(t *testing.T) *Recorder {
	r := &Recorder{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// Seen returns the Authorization header of each request so far.
func (r *Recorder) Seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// WantNothingRan fails t when the exec plugin that writes marker ran or a request reached the server.
func (r *Recorder) WantNothingRan(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Error("the exec plugin ran")
	}
	if seen := r.Seen(); len(seen) != 0 {
		t.Errorf("%d requests reached the server", len(seen))
	}
}
