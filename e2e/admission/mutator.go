package admission

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Names of Harvester's mutating configuration and its webhook (harvester/harvester pkg/webhook/types.go
// MutatingWebhookName, pkg/webhook/server/server.go listenAndServe).
const (
	HarvesterMutatorConfigurationName = "harvester-mutator"
	HarvesterMutatorWebhookName       = "mutator.harvesterhci.io"
	// harvesterMutationPath is where Harvester's webhook server serves mutation (server.go mutationPath).
	harvesterMutationPath = "/v1/webhook/mutation"
)

// HarvesterMutatorConfiguration returns the MutatingWebhookConfiguration that sends VirtualMachine creates and
// updates to Harvester's VM mutator in this server, as Harvester's webhook server registers it
// (harvester/harvester pkg/webhook/server/server.go listenAndServe and buildRules), with only the
// VirtualMachine mutator's rule (pkg/webhook/resources/virtualmachine mutator.go Resource: CREATE and UPDATE of
// virtualmachines, kubevirt.io/v1, namespaced) and a URL instead of the harvester-webhook Service. Harvester's
// failure policy is Ignore: a VM the mutator fails on is stored as sent. No timeout (the API server's default,
// 10 s), sideEffects None, so server-side dry runs are mutated too.
func (w *Webhook) HarvesterMutatorConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.NamespacedScope
	url := w.URL + harvesterMutationPath
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: HarvesterMutatorConfigurationName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         HarvesterMutatorWebhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.CA},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{kubevirtv1.GroupVersion.Group},
					APIVersions: []string{kubevirtv1.GroupVersion.Version},
					Resources:   []string{"virtualmachines"},
					Scope:       &scope,
				},
			}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
		}},
	}
}

// RegisterMutator applies HarvesterMutatorConfiguration (the server must be the harvester tool's) and waits until
// the API server calls the mutator: until a server-side dry run of MutatorProbeVM comes back with the CPU cores
// the mutator fills in (patchDefaultCPU), which needs none of its caches. Its failure policy being
// Ignore, a mutator not yet called would otherwise let the first VMs of a test through unmutated, silently.
func (w *Webhook) RegisterMutator(ctx context.Context, cfg *rest.Config) error {
	return w.applyAndAwait(ctx, cfg, w.HarvesterMutatorConfiguration(), HarvesterMutatorWebhookName, MutatorProbeVM(),
		func(got *kubevirtv1.VirtualMachine, err error) bool {
			return err == nil && got.Spec.Template.Spec.Domain.CPU != nil && got.Spec.Template.Spec.Domain.CPU.Cores == 1
		})
}

// MutatorProbeVM returns a VirtualMachine every validator accepts whose CPU section has no cores, which Harvester's
// mutator always sets (a missing section it adds too, but only after a patch of cpu/maxSockets the API server
// cannot apply without one: mutator.go Create).
func MutatorProbeVM() *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	return &kubevirtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "dmdh-harvester-mutator-probe", Namespace: metav1.NamespaceDefault},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &halted,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Sockets: 1, Threads: 1},
					Resources: kubevirtv1.ResourceRequirements{
						Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
					}},
			}},
		},
	}
}
