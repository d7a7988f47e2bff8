// Package admission runs the upstream VirtualMachine admission of KubeVirt and of Harvester in the test bed, each
// a webhook server of a tool built from the upstream code, registered with the API server as upstream registers
// it, with a URL on 127.0.0.1 and a CA bundle in place of the upstream Service:
//
//   - KubeVirt's: the kubevirt tool (hack/tools/kubevirt: virt-api's handler and VirtualMachine admitter), as the
//     webhook virt-operator installs for VirtualMachines (kubevirt/kubevirt
//     pkg/virt-operator/resource/generate/components/webhooks.go, virtualmachine-validator.kubevirt.io);
//   - Harvester's: the harvester tool (hack/tools/harvester: pkg/webhook/resources/virtualmachine's validator and
//     mutator behind Harvester's admission handler), as Harvester's webhook server registers them
//     (harvester/harvester pkg/webhook/server/server.go, validator.harvesterhci.io and mutator.harvesterhci.io).
package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	certutil "k8s.io/client-go/util/cert"

	proc "github.com/harvester/docker-machine-driver-harvester/e2e/internal/process"
)

// Options configures Start and StartHarvester.
type Options struct {
	// Tool is the path of the tool: the kubevirt tool (upstream.KubeVirtTool) for Start, the harvester tool
	// (upstream.HarvesterTool) for StartHarvester.
	Tool string
	// Dir receives the serving certificate and key, the server's address and its log (kubevirt-webhook.log,
	// harvester-webhook.log).
	Dir string
	// Kubeconfig lets the server read the cluster: KubeVirt's admitter its instancetypes and preferences (empty:
	// it cannot), Harvester's validator everything its caches hold (required).
	Kubeconfig string
}

// Webhook is a running admission server.
type Webhook struct {
	upstream upstream
	proc     *proc.Process
	logPath  string
	// URL is the server's base address, https://127.0.0.1:<port>.
	URL string
	// CA is the PEM bundle that verifies the server.
	CA []byte
	// client trusts CA.
	client *http.Client
}

// Start starts KubeVirt's VirtualMachine admission (see start).
func Start(ctx context.Context, opts Options) (*Webhook, error) {
	return start(ctx, kubevirtUpstream, opts)
}

// StartHarvester starts Harvester's VirtualMachine validator and mutator, one server (see start); Register and
// RegisterMutator put each in the API server's path.
func StartHarvester(ctx context.Context, opts Options) (*Webhook, error) {
	if opts.Kubeconfig == "" {
		return nil, errors.New("Harvester's validator needs a kubeconfig: its caches read the cluster")
	}
	return start(ctx, harvesterUpstream, opts)
}

// start makes a serving certificate for 127.0.0.1, starts the server and waits until it answers over TLS.
// Register then puts it in the API server's path. On error nothing is left running.
func start(ctx context.Context, up upstream, opts Options) (*Webhook, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, fmt.Errorf("make the webhook's serving certificate: %w", err)
	}
	path := func(name string) string { return filepath.Join(opts.Dir, name) }
	base := up.tool + "-webhook"
	for name, data := range map[string][]byte{base + ".crt": certPEM, base + ".key": keyPEM} {
		if err := os.WriteFile(path(name), data, 0o600); err != nil {
			return nil, err
		}
	}
	addrFile := path(base + ".addr")
	_ = os.Remove(addrFile)
	args := []string{"webhook", "-cert", path(base + ".crt"), "-key", path(base + ".key"), "-addr-file", addrFile}
	if opts.Kubeconfig != "" {
		args = append(args, "-kubeconfig", opts.Kubeconfig)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	w := &Webhook{upstream: up, logPath: path(base + ".log"), CA: certPEM,
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	if w.proc, err = proc.Start(up.tool+" webhook", opts.Tool, args, w.logPath); err != nil {
		return nil, err
	}
	err = w.proc.PollReady(ctx, func(ctx context.Context) error {
		addr, err := os.ReadFile(addrFile)
		if err != nil {
			return fmt.Errorf("no address yet: %w", err)
		}
		w.URL = "https://" + strings.TrimSpace(string(addr))
		return proc.GetOK(ctx, w.client, w.URL+"/healthz")
	})
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, w.Logs(30))
		w.Stop()
		return nil, err
	}
	return w, nil
}

// Var reads the variable name the server publishes at /debug/vars (Go's expvar) into v: the Harvester tool's
// index lookups (hack/tools/harvester index.go). KubeVirt's tool publishes none.
func (w *Webhook) Var(ctx context.Context, name string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.URL+"/debug/vars", nil)
	if err != nil {
		return err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/debug/vars: %s", w.URL, resp.Status)
	}
	var vars map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&vars); err != nil {
		return fmt.Errorf("GET %s/debug/vars: %w", w.URL, err)
	}
	raw, ok := vars[name]
	if !ok {
		return fmt.Errorf("%s publishes no variable %s at /debug/vars", w.URL, name)
	}
	return json.Unmarshal(raw, v)
}

// Stop ends the server. It is safe to call more than once.
func (w *Webhook) Stop() {
	if w != nil && w.proc != nil {
		w.proc.Stop(0)
	}
}

// Logs returns the last n lines of the server's log, for failure messages.
func (w *Webhook) Logs(n int) string {
	if w == nil {
		return "" // not started
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s\n", n, w.logPath, proc.TailFile(w.logPath, n))
}

// Exited reports whether the server has ended, and how; a live bed's server never does.
func (w *Webhook) Exited() (bool, error) {
	if w == nil || w.proc == nil {
		return false, errors.New("no webhook server")
	}
	return w.proc.Exited()
}
