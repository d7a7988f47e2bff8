package harvester

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The few fields of Harvester's own resources the driver reads. They mirror harvesterhci.io/v1beta1 from
// github.com/harvester/harvester/pkg/apis (TestHarvesterMirrorsMatch checks them against those types): that
// package itself is not linked into the plugin because it drags in wrangler's and lasso's controller machinery
// and the whole client-go scheme, which would push the plugin over its 30 MB budget.

var harvesterGroupVersion = schema.GroupVersion{Group: "harvesterhci.io", Version: "v1beta1"}

// Condition types Harvester sets (harvesterhci.io/v1beta1 ImageImported, ImageRetryLimitExceeded, KeyPairValidated).
const (
	conditionImported           = "Imported"
	conditionRetryLimitExceeded = "RetryLimitExceeded"
	conditionValidated          = "validated"
)

// virtualMachineImage mirrors harvesterhci.io/v1beta1 VirtualMachineImage.
type virtualMachineImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		DisplayName string `json:"displayName"`
		URL         string `json:"url"`
	} `json:"spec"`
	Status struct {
		AppliedURL       string               `json:"appliedUrl,omitempty"`
		Progress         int                  `json:"progress,omitempty"`
		StorageClassName string               `json:"storageClassName,omitempty"`
		Conditions       []harvesterCondition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

// keyPair mirrors harvesterhci.io/v1beta1 KeyPair.
type keyPair struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		PublicKey string `json:"publicKey"`
	} `json:"spec"`
	Status struct {
		FingerPrint string               `json:"fingerPrint,omitempty"`
		Conditions  []harvesterCondition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

// harvesterCondition mirrors harvesterhci.io/v1beta1 Condition.
type harvesterCondition struct {
	Type    string                 `json:"type"`
	Status  corev1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason,omitempty"`
	Message string                 `json:"message,omitempty"`
}
