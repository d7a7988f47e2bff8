package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"kubevirt.io/client-go/kubecli"

	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	validating_webhook "kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

// serveWebhook serves virt-api's VirtualMachine validation on components.VMValidatePath with KubeVirt's own
// handler (kubevirt/kubevirt pkg/virt-api/api.go registerValidatingWebhooks), over HTTPS on 127.0.0.1, until
// SIGTERM or SIGINT. Once it listens it writes its address (host:port) to -addr-file, through a rename.
func serveWebhook(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	certFile := fs.String("cert", "", "serving certificate (PEM)")
	keyFile := fs.String("key", "", "serving key (PEM)")
	addrFile := fs.String("addr-file", "", "write the address listened on to this file")
	kubeconfig := fs.String("kubeconfig", "", "cluster the admitter may read (instancetypes, preferences); empty: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *certFile == "" || *keyFile == "" || *addrFile == "" {
		return errors.New("webhook needs -cert, -key and -addr-file")
	}
	cfg, err := clusterConfig()
	if err != nil {
		return err
	}
	var virtCli kubecli.KubevirtClient
	if *kubeconfig != "" {
		if virtCli, err = kubecli.GetKubevirtClientFromFlags("", *kubeconfig); err != nil {
			return fmt.Errorf("client for %s: %w", *kubeconfig, err)
		}
	}

	mux := http.NewServeMux()
	mux.HandleFunc(components.VMValidatePath, func(w http.ResponseWriter, r *http.Request) {
		validating_webhook.ServeVMs(w, r, cfg, virtCli, &webhooks.Informers{}, nil)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := &http.Server{Handler: recoverPanics(mux, stderr)}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, *certFile, *keyFile) }()
	if err := writeAtomic(*addrFile, ln.Addr().String()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kubevirt webhook: serving %s on https://%s\n", components.VMValidatePath, ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-served:
		return err
	case s := <-sig:
		fmt.Fprintf(stderr, "kubevirt webhook: %v, stopping\n", s)
		return srv.Shutdown(context.Background())
	}
}

// recoverPanics answers 500 with the panic instead of dropping the connection, and logs the stack: the API
// server then reports the webhook's failure with a reason instead of an EOF.
func recoverPanics(h http.Handler, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(log, "kubevirt webhook: panic serving %s: %v\n%s", r.URL.Path, p, debug.Stack())
				http.Error(w, fmt.Sprintf("KubeVirt's admitter panicked: %v", p), http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
