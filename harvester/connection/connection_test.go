package connection

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// getNode makes one request through a client for cred and returns its error.
func getNode(t *testing.T, cred Credential) error {
	t.Helper()
	c, _, err := Connect(cred, time.Now())
	if err != nil {
		return err
	}
	_, err = kube.Get(context.Background(), c, kube.Nodes, "", "n1")
	return err
}

// A credential given as content never runs its exec plugin: connect refuses it, naming the field, and nothing
// reaches the server.
func TestContentCredentialNeverRunsExec(t *testing.T) {
	srv := configtest.NewRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	err := getNode(t, Credential{Content: []byte(configtest.ExecKubeconfig(srv.URL, marker))})
	var inline *config.InlineCredentialError
	if !errors.As(err, &inline) || !strings.Contains(err.Error(), `its user "u" uses exec, which runs a command on this machine`) {
		t.Fatalf("want the exec plugin refused, got %v", err)
	}
	srv.WantNothingRan(t, marker)
}

// Behind the refusal, the REST config of a content credential tells client-go to refuse exec plugins: one that
// got past the check still never runs, and no request is sent without its credential.
func TestContentRESTConfigDeniesExecPlugins(t *testing.T) {
	srv := configtest.NewRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	raw, err := clientcmd.Load([]byte(configtest.ExecKubeconfig(srv.URL, marker)))
	if err != nil {
		t.Fatal(err)
	}
	// As if config.LoadContentKubeconfig had chosen the exec user.
	past := &config.ContentKubeconfig{Context: raw.CurrentContext, Chosen: raw}
	cfg, err := past.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
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
	srv.WantNothingRan(t, marker)
}

// A kubeconfig file the user names ($KUBECONFIG, or cloud-provider-config --kubeconfig) is their own and is read
// as kubectl reads it: its exec plugin runs and its token is sent.
func TestOwnKubeconfigFileMayRunExec(t *testing.T) {
	srv := configtest.NewRecorder(t)
	for _, viaPath := range []bool{true, false} {
		// Each case its own marker, so its own exec configuration: client-go caches an authenticator per configuration.
		marker := filepath.Join(t.TempDir(), "marker")
		file := writeFile(t, configtest.ExecKubeconfig(srv.URL, marker))
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
		if seen := srv.Seen(); len(seen) == 0 || seen[len(seen)-1] != "Bearer from-exec" {
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

// The user's own kubeconfig file is read as kubectl reads it, a key given twice included; one client-go would
// refuse with a message printing its entries (two users of one name) is refused naming the file and the list,
// without the entries' credentials.
func TestOwnKubeconfigFileErrorsQuoteNoCredential(t *testing.T) {
	srv := configtest.NewRecorder(t)
	twice := writeFile(t, strings.Replace(configtest.ExecKubeconfig(srv.URL, filepath.Join(t.TempDir(), "marker")),
		"current-context: h", "current-context: x\ncurrent-context: h", 1))
	if err := getNode(t, Credential{Path: twice}); !apierrors.IsNotFound(err) {
		t.Errorf("a key given twice: want the server's 404, got %v", err)
	}
	dup := writeFile(t, `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: tok-a}}, {name: u, user: {username: admin, password: hunter2x}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`)
	err := getNode(t, Credential{Path: dup})
	if err == nil || !strings.Contains(err.Error(), "the kubeconfig "+dup+" is refused: two of its users are named \"u\"") ||
		strings.Contains(err.Error(), "hunter2x") || strings.Contains(err.Error(), "tok-a") {
		t.Errorf("want the file refused without its credentials, got %v", err)
	}
}

// A client made by Connect follows no redirect, whichever way the credential came: as content, as the file the
// user named, or from $KUBECONFIG. Nothing reaches the redirect's target, and the error names both hosts.
func TestConnectFollowsNoRedirect(t *testing.T) {
	const token = "Q9-connect-redirect-token"
	for _, via := range []string{"content", "path", "KUBECONFIG"} {
		t.Run(via, func(t *testing.T) {
			r := configtest.NewRedirector(t)
			cred := Credential{Content: []byte(r.Kubeconfig(token))}
			switch file := writeFile(t, r.Kubeconfig(token)); via {
			case "path":
				cred = Credential{Path: file}
			case "KUBECONFIG":
				cred = Credential{}
				t.Setenv("KUBECONFIG", file)
			}
			r.WantRefused(t, getNode(t, cred), token)
		})
	}
}

// What the credential authenticates with — its token, its password, its client key — is withheld from whatever
// the server answers: a proxy that echoes a request's Authorization header, say.
func TestConnectHoldsTheCredential(t *testing.T) {
	cert, key := configtest.ClientCertificate(t)
	keyBody := strings.Split(string(key), "\n")[1] // a line of the key's base64, more than 8 characters
	for _, tc := range []struct{ name, user, secret string }{
		{"token", "token: Q9-held-bearer-token", "Q9-held-bearer-token"},
		{"password", "username: admin, password: Q9-held-password", "Q9-held-password"},
		{"client key", fmt.Sprintf("client-certificate-data: %s, client-key-data: %s",
			base64.StdEncoding.EncodeToString(cert), base64.StdEncoding.EncodeToString(key)), keyBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":%q}`, "a proxy refused "+tc.secret)
			}))
			defer srv.Close()
			kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {%s}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, srv.URL, tc.user)
			err := getNode(t, Credential{Content: []byte(kubeconfig)})
			if !apierrors.IsForbidden(err) || strings.Contains(err.Error(), tc.secret) || !strings.Contains(err.Error(), "a proxy refused "+kube.Withheld) {
				t.Errorf("want the 403 with the %s withheld, got %v", tc.name, err)
			}
		})
	}
}
