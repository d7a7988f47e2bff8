package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// recorder is a TLS API server (client-go sends a user's credential only over TLS) that answers 404 and keeps the Authorization header of each request.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// wantNothingRan fails t when the exec plugin that writes marker ran or a request reached the server.
func (r *recorder) wantNothingRan(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Error("the exec plugin ran")
	}
	if seen := r.seen(); len(seen) != 0 {
		t.Errorf("%d requests reached the server", len(seen))
	}
}

// execKubeconfig is a kubeconfig for server whose user gets its token from a shell command that writes marker.
func execKubeconfig(server, marker string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh,
  args: [-c, "touch %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'"]}}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, server, marker)
}

// getNode makes one request through a client for cred and returns its error.
func getNode(t *testing.T, cred Credential) error {
	t.Helper()
	c, _, err := connect(cred, time.Now())
	if err != nil {
		return err
	}
	_, err = kube.Get(context.Background(), c, kube.Nodes, "", "n1")
	return err
}

// A credential given as content never runs its exec plugin: connect refuses it, naming the field, and nothing
// reaches the server.
func TestContentCredentialNeverRunsExec(t *testing.T) {
	srv := newRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	err := getNode(t, Credential{Content: []byte(execKubeconfig(srv.URL, marker))})
	var inline *config.InlineCredentialError
	if !errors.As(err, &inline) || !strings.Contains(err.Error(), `its user "u" uses exec, which runs a command on this machine`) {
		t.Fatalf("want the exec plugin refused, got %v", err)
	}
	srv.wantNothingRan(t, marker)
}

// Behind the refusal, the REST config of a content credential tells client-go to refuse exec plugins: one that
// got past the check still never runs, and no request is sent without its credential.
func TestContentRESTConfigDeniesExecPlugins(t *testing.T) {
	srv := newRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	cfg, err := restConfig(Credential{Path: writeFile(t, execKubeconfig(srv.URL, marker))})
	if err != nil {
		t.Fatal(err)
	}
	denyPlugins(cfg)
	if cfg.ExecProvider.PluginPolicy.PolicyType != clientcmdapi.PluginPolicyDenyAll {
		t.Fatalf("policy %q", cfg.ExecProvider.PluginPolicy.PolicyType)
	}
	c, err := kube.NewForConfig(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kube.Get(context.Background(), c, kube.Nodes, "", "n1")
	if err == nil || !strings.Contains(err.Error(), `not allowed: policy set to "DenyAll"`) {
		t.Fatalf("want client-go's DenyAll refusal, got %v", err)
	}
	srv.wantNothingRan(t, marker)
}

// A kubeconfig file the user names ($KUBECONFIG, or cloud-provider-config --kubeconfig) is their own and is read
// as kubectl reads it: its exec plugin runs and its token is sent.
func TestOwnKubeconfigFileMayRunExec(t *testing.T) {
	srv := newRecorder(t)
	for _, viaPath := range []bool{true, false} {
		// Each case its own marker, so its own exec configuration: client-go caches an authenticator per configuration.
		marker := filepath.Join(t.TempDir(), "marker")
		file := writeFile(t, execKubeconfig(srv.URL, marker))
		cred := Credential{}
		if viaPath {
			cred.Path = file
		} else {
			t.Setenv("KUBECONFIG", file)
		}
		if err := getNode(t, cred); !apierrors.IsNotFound(err) {
			t.Fatalf("%+v: want the server's 404, got %v", cred, err)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("%+v: the exec plugin did not run: %v", cred, err)
		}
		if seen := srv.seen(); len(seen) == 0 || seen[len(seen)-1] != "Bearer from-exec" {
			t.Errorf("%+v: the server saw %q, want the plugin's token", cred, seen)
		}
	}
}

// writeFile writes content to a new file of the test and returns its path.
func writeFile(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A machine's saved credential is content too: one that names an exec plugin (saved by an older driver) is
// refused when the machine is loaded, and the command that needs it says so and how to give a current one; the
// plugin never runs and nothing reaches the server.
func TestSavedCredentialIsInlineOnly(t *testing.T) {
	srv := newRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	d := NewDriver("", "")
	if err := json.Unmarshal(referenceState(t, execKubeconfig(srv.URL, marker)), d); err != nil {
		t.Fatalf("loading must not fail on a refused credential (rm must still be able to run with another): %v", err)
	}
	_, err := d.api()
	if err == nil || !strings.Contains(err.Error(), "the Harvester credential saved with this machine is refused") ||
		!strings.Contains(err.Error(), `its user "u" uses exec`) || !strings.Contains(err.Error(), "pass a current one with --harvester-kubeconfig-content") {
		t.Fatalf("want the saved credential refused, got %v", err)
	}
	srv.wantNothingRan(t, marker)
}
