package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// listener is a TLS API server that asks for a client certificate and keeps what reaches it: connections, each
// request's Authorization header and client certificate. It answers 404.
type listener struct {
	*httptest.Server
	mu          sync.Mutex
	connections int
	auth        []string
	clientCerts int
}

func newListener(t testing.TB, handler http.HandlerFunc) *listener {
	l := &listener{}
	if handler == nil {
		handler = http.NotFound
	}
	l.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.auth = append(l.auth, r.Header.Get("Authorization"))
		l.clientCerts += len(r.TLS.PeerCertificates)
		l.mu.Unlock()
		handler(w, r)
	}))
	l.Server.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	l.Server.Config.ErrorLog = log.New(io.Discard, "", 0) // a plugin that exits mid-handshake is no news
	l.Server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.mu.Lock()
			l.connections++
			l.mu.Unlock()
		}
	}
	l.StartTLS()
	t.Cleanup(l.Close)
	return l
}

// reached says whether anything reached the listener, and what.
func (l *listener) reached() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.connections == 0 {
		return ""
	}
	return fmt.Sprintf("%d connections, Authorization headers %q, %d client certificates", l.connections, l.auth, l.clientCerts)
}

// kubeconfigFor is a kubeconfig for server whose user and cluster hold the given YAML fields.
func kubeconfigFor(server, user, cluster string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: %q%s}}]
users: [{name: u, user: {%s}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, server, cluster, user)
}

// execUser is a kubeconfig user whose exec plugin writes marker and prints token.
func execUser(marker, token string) string {
	return fmt.Sprintf(`exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh, args: [-c, "touch %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}'"]}`,
		marker, token)
}

// checkArgs are a valid machine for the check verb.
var checkArgs = []string{"check", "--machine-name", "m1", "--harvester-image-name", "default/ubuntu",
	"--harvester-disk-size", "40", "--harvester-network-name", "default/vlan1"}

// pluginRun is one run of the plugin binary.
type pluginRun struct {
	stdout, stderr string
	code           int
	took           time.Duration
	peakRSS        int64
}

// runPlugin runs the plugin binary with args and extra environment (no HARVESTER_* or KUBECONFIG of the
// machine's), killing it after limit.
func runPlugin(t testing.TB, limit time.Duration, env []string, args ...string) pluginRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd, peak := meteredPlugin(ctx, t, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KUBECONFIG=" + filepath.Join(t.TempDir(), "none")}
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	p := pluginRun{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("the plugin still ran after %v:\n%s%s", limit, p.stdout, p.stderr)
	}
	if exit, ok := err.(*exec.ExitError); ok {
		p.code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	p.peakRSS = peak()
	return p
}

// A credential's exec plugin never runs, however the credential is given — by flag, by plain or base64
// environment, to check or to cloud-provider-config — and nothing reaches the server it names; the refusal names
// the field and its inline alternative.
func TestExecCredentialNeverRuns(t *testing.T) {
	srv := newListener(t, nil)
	marker := filepath.Join(t.TempDir(), "marker")
	kubeconfig := kubeconfigFor(srv.URL, execUser(marker, "from-exec"), ", insecure-skip-tls-verify: true")
	b64 := base64.StdEncoding.EncodeToString([]byte(kubeconfig))
	cloudProviderArgs := []string{"cloud-provider-config", "--namespace", "default", "--cluster-name", "gc1"}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"check, by flag", nil, append(append([]string{}, checkArgs...), "--harvester-kubeconfig-content", kubeconfig), "--harvester-kubeconfig-content: is refused"},
		{"check, plain environment", []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfig}, checkArgs, "--harvester-kubeconfig-content: is refused"},
		{"check, base64 environment", []string{"HARVESTER_KUBECONFIG_CONTENT=" + b64}, checkArgs, "--harvester-kubeconfig-content: is refused"},
		{"cloud-provider-config, plain environment", []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfig}, cloudProviderArgs, "$HARVESTER_KUBECONFIG_CONTENT: is refused"},
		{"cloud-provider-config, base64 environment", []string{"HARVESTER_KUBECONFIG_CONTENT=" + b64}, cloudProviderArgs, "$HARVESTER_KUBECONFIG_CONTENT: is refused"},
		{"render, the guest's kubeconfig", nil, []string{"render", "--machine-name", "m1", "--harvester-image-name", "default/ubuntu", "--harvester-disk-size", "40",
			"--harvester-network-name", "default/vlan1", "--harvester-cloud-provider-config", kubeconfig}, "--harvester-cloud-provider-config: is refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := runPlugin(t, time.Minute, tt.env, tt.args...)
			if p.code != 1 || !strings.Contains(p.stderr, tt.want) ||
				!strings.Contains(p.stderr, `its user "u" uses exec, which runs a command on this machine: give the token it prints, as token instead`) {
				t.Errorf("want exit 1 and the exec plugin refused (%q), got exit %d:\n%s%s", tt.want, p.code, p.stdout, p.stderr)
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Fatal("the exec plugin ran: its marker file exists")
			}
			if got := srv.reached(); got != "" {
				t.Errorf("the server was reached: %s", got)
			}
		})
	}
}

// A tokenFile or a client certificate on this machine's disk is never read and sent: a TLS listener that asks
// for client certificates sees nothing at all.
func TestLocalCredentialFilesAreNeverSent(t *testing.T) {
	srv := newListener(t, nil)
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("token-from-disk"), 0o600)
	cert, key := clientCertificate(t, dir)
	for _, tt := range []struct{ name, user, field string }{
		{"tokenFile", "tokenFile: " + token, "tokenFile"},
		{"client certificate and key files", "client-certificate: " + cert + ", client-key: " + key, "client-certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(srv.URL, tt.user, ", insecure-skip-tls-verify: true")}
			p := runPlugin(t, time.Minute, env, checkArgs...)
			if p.code != 1 || !strings.Contains(p.stderr, `its user "u" uses `+tt.field+`, which reads a file on this machine`) {
				t.Errorf("want exit 1 and %s refused, got exit %d:\n%s%s", tt.field, p.code, p.stdout, p.stderr)
			}
			if got := srv.reached(); got != "" {
				t.Errorf("the server was reached: %s", got)
			}
		})
	}
}

// /dev/zero, a FIFO and a socket in every file field of a credential (given to check) and of the guest's
// kubeconfig (given to render) are refused at once: nothing opens them, the plugin neither hangs nor grows.
func TestSpecialFilesInKubeconfigFieldsAreRefusedPromptly(t *testing.T) {
	const maxRSS = 100 << 20
	fifo, sock := hostile.SpecialFiles(t)
	fields := []struct{ field, user, cluster string }{
		{"tokenFile", "tokenFile: %s", ""},
		{"client-certificate", "client-certificate: %s, client-key-data: Zm9v", ""},
		{"client-key", "client-certificate-data: Zm9v, client-key: %s", ""},
		{"certificate-authority", "token: abc", ", certificate-authority: %s"},
	}
	for _, path := range []string{"/dev/zero", fifo, sock} {
		for _, f := range fields {
			user, cluster := f.user, f.cluster
			if strings.Contains(user, "%s") {
				user = fmt.Sprintf(user, path)
			} else {
				cluster = fmt.Sprintf(cluster, path)
			}
			kubeconfig := kubeconfigFor("https://192.0.2.10:6443", user, cluster)
			for _, run := range []struct {
				env  []string
				args []string
				flag string
			}{
				{[]string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfig}, checkArgs, "harvester-kubeconfig-content"},
				{nil, []string{"render", "--machine-name", "m1", "--harvester-image-name", "default/ubuntu", "--harvester-disk-size", "40",
					"--harvester-network-name", "default/vlan1", "--harvester-cloud-provider-config", kubeconfig}, "harvester-cloud-provider-config"},
			} {
				p := runPlugin(t, 30*time.Second, run.env, run.args...)
				if p.code != 1 || !strings.Contains(p.stderr, "--"+run.flag+": is refused") || !strings.Contains(p.stderr, " uses "+f.field+", which reads a file") {
					t.Errorf("%s as %s of --%s: want exit 1 and the field refused, got exit %d:\n%s", path, f.field, run.flag, p.code, p.stderr)
				}
				if p.took > 10*time.Second || p.peakRSS > maxRSS {
					t.Errorf("%s as %s of --%s: the plugin took %v and grew to %d MB", path, f.field, run.flag, p.took, p.peakRSS>>20)
				}
			}
		}
	}
}

// A server that streams an endless body cannot grow the plugin: the read stops at the response budget, check
// ends well within the pre-flight's time bound naming the endpoint, and the plugin stays under 100 MB.
func TestEndlessResponseNeitherHangsNorGrowsThePlugin(t *testing.T) {
	const maxRSS = 100 << 20
	chunk := append([]byte(`{"kind":"List","items":[`), bytes.Repeat([]byte(`{"metadata":{"name":"x"}},`), 2048)...)
	srv := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	env := []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(srv.URL, "token: abc", ", insecure-skip-tls-verify: true")}
	p := runPlugin(t, 3*time.Minute, env, checkArgs...) // the pre-flight's bound is 2 minutes (checkTimeout)
	if p.code != 1 || !strings.HasPrefix(p.stdout, "problem  credential            --harvester-kubeconfig-content: cannot read namespace default: ") ||
		!strings.Contains(p.stdout, " grew past 16 MiB, more than any Harvester object or list the driver reads needs") ||
		!strings.Contains(p.stdout, "the response to GET "+srv.URL+"/api/v1/namespaces/default") || strings.Contains(p.stderr, "client-go") {
		t.Errorf("want exit 1 and the response refused naming its endpoint, got exit %d:\n%s%s", p.code, p.stdout, p.stderr)
	}
	if p.peakRSS > maxRSS {
		t.Errorf("the plugin grew to %d MB, more than %d MB", p.peakRSS>>20, maxRSS>>20)
	}
	t.Logf("check ended in %v, peak RSS %d MB", p.took.Round(time.Millisecond), p.peakRSS>>20)
}

// $KUBECONFIG is the docker-machine user's own file, read as kubectl reads it: its exec plugin runs and its token
// is sent (the other side of TestExecCredentialNeverRuns).
func TestOwnKubeconfigRunsItsExecPlugin(t *testing.T) {
	srv := newListener(t, nil)
	marker := filepath.Join(t.TempDir(), "marker")
	file := filepath.Join(t.TempDir(), "config")
	os.WriteFile(file, []byte(kubeconfigFor(srv.URL, execUser(marker, "from-exec"), ", insecure-skip-tls-verify: true")), 0o600)
	p := runPlugin(t, time.Minute, []string{"KUBECONFIG=" + file}, checkArgs...)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the exec plugin of $KUBECONFIG did not run (exit %d):\n%s%s", p.code, p.stdout, p.stderr)
	}
	if got := srv.reached(); !strings.Contains(got, `"Bearer from-exec"`) {
		t.Errorf("the server did not get the plugin's token: %q", got)
	}
}

// clientCertificate writes a self-signed client certificate and its key into dir and returns their paths.
func clientCertificate(t *testing.T, dir string) (cert, key string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "host"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return cert, key
}
