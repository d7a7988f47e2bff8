package admission

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubevirt"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
)

// Names of the configuration and its webhook: virt-operator's (components.VirtAPIValidatingWebhookName and the
// VirtualMachine entry of NewVirtAPIValidatingWebhookConfiguration), so the API server's refusals read as on
// Harvester: admission webhook "virtualmachine-validator.kubevirt.io" denied the request: ...
const (
	ConfigurationName = "virt-api-validator"
	WebhookName       = "virtualmachine-validator.kubevirt.io"
	// vmValidatePath is components.VMValidatePath, where virt-api serves VirtualMachine validation.
	vmValidatePath = "/virtualmachines-validate"
)

// upstream is what differs between the admission servers: the tool, the webhook's registration and the probe.
type upstream struct {
	// tool names the tool (hack/tools/<tool>); its files in Options.Dir are <tool>-webhook.{crt,key,addr,log}.
	tool string
	// webhook is the webhook's name, which the API server quotes in refusals.
	webhook string
	// configuration returns the registration for a server at url (https://host:port) verified by ca.
	configuration func(url string, ca []byte) *admissionregistrationv1.ValidatingWebhookConfiguration
	// probe returns a VirtualMachine the schema and the other webhooks accept and this one refuses.
	probe func() *kubevirtv1.VirtualMachine
}

var kubevirtUpstream = upstream{tool: "kubevirt", webhook: WebhookName, configuration: kubevirtConfiguration, probe: ProbeVM}

// Configuration returns the ValidatingWebhookConfiguration that sends VirtualMachine writes to this server, as
// upstream registers it.
func (w *Webhook) Configuration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return w.upstream.configuration(w.URL, w.CA)
}

// kubevirtConfiguration sends VirtualMachine creates and updates to KubeVirt's admission: virt-operator's rule,
// failure policy, timeout and side effects, with a URL instead of a Service. sideEffects None lets server-side
// dry runs through it too.
func kubevirtConfiguration(base string, ca []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10) // components.defaultTimeoutSeconds
	url := base + vmValidatePath
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName, Labels: map[string]string{kubevirtv1.AppLabel: ConfigurationName}},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    WebhookName,
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           &fail,
			TimeoutSeconds:          &timeout,
			SideEffects:             &none,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{kubevirtv1.GroupVersion.Group},
					APIVersions: kubevirtv1.ApiSupportedWebhookVersions,
					Resources:   []string{"virtualmachines"},
				},
			}},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		}},
	}
}

// Register applies Configuration and waits until the API server calls the webhook: until a server-side dry run
// of a VirtualMachine that only this server refuses (ProbeVM, HarvesterProbeVM) is refused by it. The API server
// picks new webhook configurations up asynchronously; without this wait the first VMs of a test could slip past.
func (w *Webhook) Register(ctx context.Context, cfg *rest.Config) error {
	denied := fmt.Sprintf("admission webhook %q denied the request", w.upstream.webhook)
	return w.applyAndAwait(ctx, cfg, w.Configuration(), w.upstream.webhook, w.upstream.probe(),
		func(_ *kubevirtv1.VirtualMachine, err error) bool {
			return err != nil && strings.Contains(err.Error(), denied)
		})
}

// applyAndAwait applies the webhook configuration and waits until the API server calls webhook: until a
// server-side dry run of probe answers as called says the webhook answers it.
func (w *Webhook) applyAndAwait(ctx context.Context, cfg *rest.Config, configuration runtime.Object, webhook string,
	probe *kubevirtv1.VirtualMachine, called func(*kubevirtv1.VirtualMachine, error) bool) error {
	a, err := apply.New(cfg)
	if err != nil {
		return err
	}
	if _, err := a.ApplyTyped(ctx, configuration); err != nil {
		return err
	}
	virt, err := kubevirt.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, perr := w.Exited(); done {
			return false, fmt.Errorf("the webhook server exited (%v)", perr)
		}
		var got *kubevirtv1.VirtualMachine
		got, last = virt.KubevirtV1().VirtualMachines(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return called(got, last), nil
	})
	if err != nil {
		return fmt.Errorf("waited for the API server to call webhook %s at %s: %w; last dry run of VM %s answered: %v\n%s",
			webhook, w.URL, err, probe.Name, last, w.Logs(30))
	}
	return nil
}

// ProbeVM returns a VirtualMachine the API server's schema accepts and KubeVirt's admitter refuses: its only disk
// names no volume.
func ProbeVM() *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	return &kubevirtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "dmdh-admission-probe", Namespace: metav1.NamespaceDefault},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &halted,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "no-such-volume"}}}},
			}},
		},
	}
}
