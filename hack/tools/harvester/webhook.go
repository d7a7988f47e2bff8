package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve"
)

// serveWebhook serves Harvester's VirtualMachine validator on validationPath and its VirtualMachine mutator on
// mutationPath over HTTPS, as Harvester's one webhook server serves both, until SIGTERM or SIGINT. The caches of
// Pods and VirtualMachines are informers, as on Harvester; the others read the cluster of -kubeconfig on every
// call (informedStore). It is served as serve.Webhook serves every tool's webhook.
func serveWebhook(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := &serve.Webhook{Name: "harvester webhook", Panicked: "Harvester's validator"}
	w.Flags(fs)
	kubeconfig := fs.String("kubeconfig", "", "the cluster the validator's caches read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := w.Check(); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("webhook needs -kubeconfig")
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
	w.Paths = map[string]http.Handler{validationPath: newHandler(newValidator(store)), mutationPath: newMutationHandler(newMutator(store))}
	return w.Run(stderr)
}
