// Package admission runs KubeVirt's own VirtualMachine admission in the test bed: the kubevirt tool's webhook
// server (virt-api's handler and VirtualMachine admitter; hack/tools/kubevirt), registered with the API server by
// the webhook virt-operator installs for VirtualMachines (kubevirt/kubevirt
// pkg/virt-operator/resource/generate/components/webhooks.go, virtualmachine-validator.kubevirt.io), with a URL
// on 127.0.0.1 and a CA bundle in place of virt-api's Service.
package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	certutil "k8s.io/client-go/util/cert"

	proc "github.com/harvester/docker-machine-driver-harvester/e2e/internal/process"
)

// Options configures Start.
type Options struct {
	// Tool is the path of the kubevirt tool (upstream.KubeVirtTool).
	Tool string
	// Dir receives the serving certificate and key, the server's address and its log (kubevirt-webhook.log).
	Dir string
	// Kubeconfig lets KubeVirt's admitter read the cluster (instancetypes, preferences); empty: it cannot.
	Kubeconfig string
}

// Webhook is a running KubeVirt admission server.
type Webhook struct {
	proc    *proc.Process
	logPath string
	// URL is the server's base address, https://127.0.0.1:<port>.
	URL string
	// CA is the PEM bundle that verifies the server.
	CA []byte
}

// Start makes a serving certificate for 127.0.0.1, starts the server and waits until it answers over TLS.
// Register then puts it in the API server's path. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Webhook, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, fmt.Errorf("make the webhook's serving certificate: %w", err)
	}
	path := func(name string) string { return filepath.Join(opts.Dir, name) }
	for name, data := range map[string][]byte{"kubevirt-webhook.crt": certPEM, "kubevirt-webhook.key": keyPEM} {
		if err := os.WriteFile(path(name), data, 0o600); err != nil {
			return nil, err
		}
	}
	addrFile := path("kubevirt-webhook.addr")
	_ = os.Remove(addrFile)
	args := []string{"webhook", "-cert", path("kubevirt-webhook.crt"), "-key", path("kubevirt-webhook.key"), "-addr-file", addrFile}
	if opts.Kubeconfig != "" {
		args = append(args, "-kubeconfig", opts.Kubeconfig)
	}
	w := &Webhook{logPath: path("kubevirt-webhook.log"), CA: certPEM}
	if w.proc, err = proc.Start("kubevirt webhook", opts.Tool, args, w.logPath); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	err = w.proc.PollReady(ctx, func(ctx context.Context) error {
		addr, err := os.ReadFile(addrFile)
		if err != nil {
			return fmt.Errorf("no address yet: %w", err)
		}
		w.URL = "https://" + strings.TrimSpace(string(addr))
		return proc.GetOK(ctx, client, w.URL+"/healthz")
	})
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, w.Logs(30))
		w.Stop()
		return nil, err
	}
	return w, nil
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
