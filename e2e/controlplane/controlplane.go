// Package controlplane runs a real Kubernetes control plane for the end-to-end tests: etcd, kube-apiserver and
// kube-controller-manager built from their Go modules by hack/tools.sh, listening on 127.0.0.1 only, with RBAC,
// token authentication and service-account tokens. Stop ends every process and removes every file.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/kubeconfig"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// BinEnv names the environment variable that points at a directory holding etcd, kube-apiserver and
// kube-controller-manager. When it is unset, `hack/tools.sh controlplane` provides (and if need be builds) them.
const BinEnv = "DMDH_CONTROLPLANE_BIN"

// AdminUser is the user name of the admin token; it is in group system:masters.
const AdminUser = "e2e-admin"

// Options configures Start. The zero value is usable.
type Options struct {
	// BinDir holds the three binaries; empty means $DMDH_CONTROLPLANE_BIN, else hack/tools.sh controlplane.
	BinDir string
	// Dir receives keys, etcd data and server logs. Empty means a new temporary directory that Stop removes;
	// a given directory is left in place.
	Dir string
	// BeforeControllerManager runs once kube-apiserver is ready and before kube-controller-manager starts.
	// Install CRDs here: the garbage collector discovers resources when it starts and then only every 30 s, so
	// owners of kinds it has not discovered yet are not collected until then.
	BeforeControllerManager func(ctx context.Context, admin *rest.Config) error
	// StartTimeout bounds the servers' start-up, from etcd's launch to the controller manager's readiness
	// (BeforeControllerManager included); zero means DefaultStartTimeout. Finding or building the binaries comes
	// first and is not bounded (see repo.ToolDir).
	StartTimeout time.Duration
	// Logf receives one line per step; nil discards them.
	Logf func(format string, args ...any)
}

// DefaultStartTimeout is the start-up bound when Options.StartTimeout is zero: about 10 s on an idle machine,
// well under a minute on a loaded 2-core one.
const DefaultStartTimeout = 3 * time.Minute

// ControlPlane is a running etcd + kube-apiserver + kube-controller-manager.
type ControlPlane struct {
	opts       Options
	bin        string
	dir        string
	ownDir     bool
	pki        *pki
	adminToken string

	etcdPort, etcdPeerPort, apiPort int

	mu        sync.Mutex // guards the process fields across RestartAPIServer and Stop
	etcd      *process
	apiserver *process
	kcm       *process
	stopped   bool
}

// dirPrefix names the temporary directories of control planes (package ownedtemp sweeps those of dead runs).
const dirPrefix = "dmdh-controlplane-"

// Start launches etcd, kube-apiserver and kube-controller-manager and returns once the API server answers
// /readyz and the controller manager has started its controllers. The binaries are found (built on a first run)
// before the start-up bound, Options.StartTimeout, begins. On error nothing is left running and the error
// carries the tail of the servers' logs.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	cp := &ControlPlane{opts: opts, bin: opts.BinDir, dir: opts.Dir}
	if cp.bin == "" {
		var err error
		if cp.bin, err = repo.ToolDir(ctx, "controlplane", BinEnv); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := cp.start(ctx); err != nil {
		// cp, not the caller's nil result, still knows the directory and the processes to report and stop.
		logs := cp.Logs(30)
		cp.Stop()
		if logs != "" {
			return nil, fmt.Errorf("%w\n%s", err, logs)
		}
		return nil, err
	}
	return cp, nil
}

// start does Start's work after the binaries are found; on error the caller stops what it started.
func (cp *ControlPlane) start(ctx context.Context) error {
	if cp.dir == "" {
		dir, err := ownedtemp.Dir(dirPrefix)
		if err != nil {
			return err
		}
		cp.dir, cp.ownDir = dir, true
	} else if err := os.MkdirAll(cp.dir, 0o700); err != nil {
		return err
	}
	var err error
	if cp.pki, err = newPKI(cp.dir); err != nil {
		return err
	}
	cp.adminToken = randomToken()
	tokens := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", cp.adminToken, AdminUser, AdminUser)
	if err = os.WriteFile(cp.path("tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	cp.etcdPort, cp.etcdPeerPort, cp.apiPort = ports[0], ports[1], ports[2]

	t0 := time.Now()
	if err = cp.startEtcd(ctx); err != nil {
		return err
	}
	cp.opts.Logf("controlplane: etcd ready on 127.0.0.1:%d after %v", cp.etcdPort, time.Since(t0).Round(time.Millisecond))
	t1 := time.Now()
	if err = cp.StartAPIServer(ctx); err != nil {
		return err
	}
	cp.opts.Logf("controlplane: kube-apiserver ready on %s after %v", cp.URL(), time.Since(t1).Round(time.Millisecond))
	if cp.opts.BeforeControllerManager != nil {
		if err = cp.opts.BeforeControllerManager(ctx, cp.AdminConfig()); err != nil {
			return err
		}
	}
	t2 := time.Now()
	if err = cp.startControllerManager(ctx); err != nil {
		return err
	}
	cp.opts.Logf("controlplane: kube-controller-manager running after %v (start-up %v in all)",
		time.Since(t2).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	return nil
}

// URL is the API server's address, https://127.0.0.1:<port>. It stays the same across RestartAPIServer.
func (cp *ControlPlane) URL() string { return fmt.Sprintf("https://127.0.0.1:%d", cp.apiPort) }

// CACert is the PEM CA bundle that verifies the API server; it is also the ca.crt of service-account tokens.
func (cp *ControlPlane) CACert() []byte { return append([]byte(nil), cp.pki.caPEM...) }

// AdminKubeconfig returns a kubeconfig for the admin token (group system:masters).
func (cp *ControlPlane) AdminKubeconfig() []byte {
	out, err := kubeconfig.Token(cp.URL(), cp.pki.caPEM, cp.adminToken, "")
	if err != nil {
		panic(err) // only fails on a serializer bug
	}
	return out
}

// AdminConfig returns a fresh client configuration for the admin token.
func (cp *ControlPlane) AdminConfig() *rest.Config {
	return &rest.Config{
		Host:            cp.URL(),
		BearerToken:     cp.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CACert()},
		QPS:             -1, // no client-side throttling: the tests measure the server, not client-go's limiter
	}
}

// Dir is the directory holding keys, data and logs.
func (cp *ControlPlane) Dir() string { return cp.dir }

// Logs returns the last n lines of each server's log, for failure messages.
func (cp *ControlPlane) Logs(n int) string {
	if cp.dir == "" {
		return "" // nothing was started
	}
	var b strings.Builder
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		path := cp.path(name + ".log")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		fmt.Fprintf(&b, "--- last %d lines of %s ---\n%s\n", n, path, tailFile(path, n))
	}
	return b.String()
}

// Stop ends all three servers (SIGKILL: their state is thrown away) and removes the directory if Start created
// it. It is safe to call more than once and on a partly started control plane.
func (cp *ControlPlane) Stop() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return
	}
	cp.stopped = true
	for _, p := range []*process{cp.kcm, cp.apiserver, cp.etcd} {
		if p != nil {
			p.stop(0)
		}
	}
	if cp.ownDir {
		_ = os.RemoveAll(cp.dir)
	}
}

// StopAPIServer stops kube-apiserver as a rolling restart would: SIGTERM, then SIGKILL after 2 s. On SIGTERM it
// closes its listener at once (clients see the outage immediately) but then waits for open watches to drain,
// which with live clients takes longer than any test wants; nothing is lost by killing it, etcd holds the state.
// etcd and the controller manager keep running.
func (cp *ControlPlane) StopAPIServer() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.apiserver != nil {
		cp.apiserver.stop(2 * time.Second)
		cp.apiserver = nil
	}
}

// StartAPIServer starts kube-apiserver on the same port, with the same etcd and keys, and waits for /readyz.
// Tokens issued before stay valid: the signing key and the token file do not change.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return errors.New("control plane is stopped")
	}
	if cp.apiserver != nil {
		return errors.New("kube-apiserver is already running")
	}
	p, err := startProcess("kube-apiserver", cp.binary("kube-apiserver"), cp.apiserverArgs(), cp.path("kube-apiserver.log"))
	if err != nil {
		return err
	}
	cp.apiserver = p
	return waitReady(ctx, p, cp.AdminConfig())
}

// The servers Pause can pause.
const (
	Etcd      = "etcd"
	APIServer = "kube-apiserver"
)

// Pause stops server (Etcd or APIServer) in its tracks (SIGSTOP), as a host that swaps, a stop-the-world pause
// or a frozen VM does: its connections stay open and it answers nothing until resume is called (SIGCONT), which
// is safe to call more than once. Do not restart a paused API server.
func (cp *ControlPlane) Pause(server string) (resume func(), err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	p := map[string]*process{Etcd: cp.etcd, APIServer: cp.apiserver}[server]
	if p == nil {
		return nil, fmt.Errorf("%s is not running", server)
	}
	if err := p.Pause(); err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { _ = p.Resume() }), nil
}

// RestartAPIServer stops and starts kube-apiserver (StopAPIServer, then StartAPIServer).
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	cp.StopAPIServer()
	return cp.StartAPIServer(ctx)
}

func (cp *ControlPlane) path(name string) string { return filepath.Join(cp.dir, name) }

func (cp *ControlPlane) binary(name string) string { return filepath.Join(cp.bin, name) }
