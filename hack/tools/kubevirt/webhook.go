package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"

	"kubevirt.io/client-go/kubecli"

	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	validating_webhook "kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"

	"github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve"
)

// serveWebhook serves virt-api's VirtualMachine validation on components.VMValidatePath with KubeVirt's own
// handler (kubevirt/kubevirt pkg/virt-api/api.go registerValidatingWebhooks), over HTTPS on 127.0.0.1, until
// SIGTERM or SIGINT, as serve.Webhook serves every tool's webhook.
func serveWebhook(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := &serve.Webhook{Name: "kubevirt webhook", Panicked: "KubeVirt's admitter"}
	w.Flags(fs)
	kubeconfig := fs.String("kubeconfig", "", "cluster the admitter may read (instancetypes, preferences); empty: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := w.Check(); err != nil {
		return err
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
	w.Paths = map[string]http.Handler{components.VMValidatePath: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		validating_webhook.ServeVMs(rw, r, cfg, virtCli, &webhooks.Informers{}, nil)
	})}
	return w.Run(stderr)
}
