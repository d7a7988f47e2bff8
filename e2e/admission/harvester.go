package admission

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Names of Harvester's validating configuration and its webhook (harvester/harvester pkg/webhook/types.go
// ValidatingWebhookName, pkg/webhook/server/server.go), so the API server's refusals read as on Harvester:
// admission webhook "validator.harvesterhci.io" denied the request: ...
const (
	HarvesterConfigurationName = "harvester-validator"
	HarvesterWebhookName       = "validator.harvesterhci.io"
	// harvesterValidationPath is where Harvester's webhook server serves validation (server.go validationPath).
	harvesterValidationPath = "/v1/webhook/validation"
	// MaintainModeStrategyLabel is the VM label Harvester's validator checks against its list of strategies
	// (harvester/harvester pkg/util/constants.go LabelMaintainModeStrategy).
	MaintainModeStrategyLabel = "harvesterhci.io/maintain-mode-strategy"
)

var harvesterUpstream = upstream{tool: "harvester", webhook: HarvesterWebhookName,
	configuration: harvesterConfiguration, probe: HarvesterProbeVM}

// harvesterConfiguration is the registration Harvester's webhook server applies
// (harvester/harvester pkg/webhook/server/server.go listenAndServe and buildRules), with only the
// VirtualMachine validator's rule (pkg/webhook/resources/virtualmachine validator.go Resource: CREATE and
// UPDATE of virtualmachines and virtualmachines/status, kubevirt.io/v1, namespaced) and a URL instead of the
// harvester-webhook Service. Harvester sets no timeout (the API server's default, 10 s, applies); failure policy
// Fail and sideEffects None, so server-side dry runs are checked too.
func harvesterConfiguration(base string, ca []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.NamespacedScope
	url := base + harvesterValidationPath
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: HarvesterConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         HarvesterWebhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{kubevirtv1.GroupVersion.Group},
					APIVersions: []string{kubevirtv1.GroupVersion.Version},
					Resources:   []string{"virtualmachines", "virtualmachines/status"},
					Scope:       &scope,
				},
			}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
		}},
	}
}

// HarvesterProbeVM returns a VirtualMachine the API server's schema and KubeVirt's admitter accept and
// Harvester's validator refuses: its maintenance-mode strategy label has a value Harvester does not know.
func HarvesterProbeVM() *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	return &kubevirtv1.VirtualMachine{
		TypeMeta: metav1.TypeMeta{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "dmdh-harvester-admission-probe", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{MaintainModeStrategyLabel: "dmdh-probe"}},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &halted,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				}},
			}},
		},
	}
}
