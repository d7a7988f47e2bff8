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
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// serveWebhook serves Harvester's VirtualMachine validator on validationPath and its VirtualMachine mutator on
// mutationPath over HTTPS, as Harvester's one webhook server serves both, until SIGTERM or SIGINT. The caches of
// Pods and VirtualMachines are informers, as on Harvester; the others read the cluster of -kubeconfig on every
// call (informedStore). Once it listens it writes its address
// (host:port) to -addr-file, through a rename; /healthz answers "ok".
func serveWebhook(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	certFile := fs.String("cert", "", "serving certificate (PEM)")
	keyFile := fs.String("key", "", "serving key (PEM)")
	addrFile := fs.String("addr-file", "", "write the address listened on to this file")
	kubeconfig := fs.String("kubeconfig", "", "the cluster the validator's caches read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *certFile == "" || *keyFile == "" || *addrFile == "" || *kubeconfig == "" {
		return errors.New("webhook needs -cert, -key, -addr-file and -kubeconfig")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("client for %s: %w", *kubeconfig, err)
	}
	// Every admission reads the cluster several times; no client-side rate limit, a bound per read instead.
	cfg.QPS, cfg.Timeout = -1, 5*time.Second
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	logrus.SetOutput(stderr)
	// Errors only: the validator warns about every VM without a maintenance-mode strategy label, which the
	// driver sets only when asked; the API server's log names each refusal ("rejected by webhook").
	logrus.SetLevel(logrus.ErrorLevel)

	mux := http.NewServeMux()
	informerCtx, stopInformers := context.WithCancel(context.Background())
	defer stopInformers()
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0 // a watch lasts
	watchClient, err := dynamic.NewForConfig(watchCfg)
	if err != nil {
		return err
	}
	store, err := newInformedStore(informerCtx, client, watchClient, pods, vms)
	if err != nil {
		return err
	}
	mux.Handle(validationPath, newHandler(newValidator(store)))
	subnetsServed, err := subnetCRDPresent(informerCtx, client)
	if err != nil {
		return err
	}
	mux.Handle(mutationPath, newMutationHandler(newMutator(store, subnetsServed)))
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
	fmt.Fprintf(stderr, "harvester webhook: serving %s and %s on https://%s\n", validationPath, mutationPath, ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-served:
		return err
	case s := <-sig:
		fmt.Fprintf(stderr, "harvester webhook: %v, stopping\n", s)
		return srv.Shutdown(context.Background())
	}
}

// subnetCRD names Kube-OVN's Subnet CRD, whose presence decides whether Harvester's webhook server gives its
// mutator a Subnet cache (pkg/webhook/server/server.go subnetsCRDName).
const subnetCRD = "subnets.kubeovn.io"

// subnetCRDPresent tells, as Harvester's webhook server does once at start (pkg/webhook/server/server.go
// isSubnetsCRDPresent), whether the Subnet CRD exists and is not being deleted. Harvester's server also restarts
// itself when that changes (watchAndTriggerReload, every 30 s); the test bed installs its CRDs before the webhook
// starts and never removes them, so this one does not.
func subnetCRDPresent(ctx context.Context, client dynamic.Interface) (bool, error) {
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := client.Resource(crds).Get(ctx, subnetCRD, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up CRD %s: %w", subnetCRD, err)
	}
	return crd.GetDeletionTimestamp() == nil, nil
}

// recoverPanics answers 500 with the panic instead of dropping the connection, and logs the stack: the API
// server then reports the webhook's failure with a reason instead of an EOF.
func recoverPanics(h http.Handler, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(log, "harvester webhook: panic serving %s: %v\n%s", r.URL.Path, p, debug.Stack())
				http.Error(w, fmt.Sprintf("Harvester's validator panicked: %v", p), http.StatusInternalServerError)
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
