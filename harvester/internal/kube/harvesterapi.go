package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The few fields of Harvester's own resources the driver reads. They mirror harvesterhci.io/v1beta1 from
// github.com/harvester/harvester/pkg/apis (TestHarvesterMirrorsMatch checks them against those types): that
// package itself is not linked into the plugin because it drags in wrangler's and lasso's controller machinery
// and the whole client-go scheme, which would push the plugin over its 30 MB budget.

// HarvesterGroupVersion is the API group and version of Harvester's resources.
var HarvesterGroupVersion = schema.GroupVersion{Group: "harvesterhci.io", Version: "v1beta1"}

// Condition types Harvester sets (harvesterhci.io/v1beta1 ImageImported, ImageRetryLimitExceeded, KeyPairValidated).
const (
	ConditionImported           = "Imported"
	ConditionRetryLimitExceeded = "RetryLimitExceeded"
	ConditionValidated          = "validated"
)

// Harvester's UI sets LabelImageType on every image ("iso" or "raw_qcow2") and AnnotationUploadedImageName
// on uploaded ones (the file's name).
const (
	LabelImageType              = "harvesterhci.io/image-type"
	AnnotationUploadedImageName = "harvesterhci.io/image-name"
)

// VirtualMachineImage mirrors harvesterhci.io/v1beta1 VirtualMachineImage.
type VirtualMachineImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		DisplayName string `json:"displayName"`
		URL         string `json:"url"`
	} `json:"spec"`
	Status struct {
		AppliedURL       string      `json:"appliedUrl,omitempty"`
		Progress         int         `json:"progress,omitempty"`
		StorageClassName string      `json:"storageClassName,omitempty"`
		Conditions       []Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

// KeyPair mirrors harvesterhci.io/v1beta1 KeyPair.
type KeyPair struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		PublicKey string `json:"publicKey"`
	} `json:"spec"`
	Status struct {
		FingerPrint string      `json:"fingerPrint,omitempty"`
		Conditions  []Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

// Condition mirrors harvesterhci.io/v1beta1 Condition.
type Condition struct {
	Type    string                 `json:"type"`
	Status  corev1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason,omitempty"`
	Message string                 `json:"message,omitempty"`
}

// FindCondition returns the condition of type typ, or nil.
func FindCondition(conds []Condition, typ string) *Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// ConditionTrue reports whether the condition of type typ is there and True.
func ConditionTrue(conds []Condition, typ string) bool {
	c := FindCondition(conds, typ)
	return c != nil && c.Status == corev1.ConditionTrue
}

// Setting mirrors harvesterhci.io/v1beta1 Setting: readers take value, falling back to default.
type Setting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Default           string `json:"default,omitempty"`
	Value             string `json:"value,omitempty"`
}

// Effective is the setting's value, or its default when no value is set.
func (s *Setting) Effective() string {
	if s.Value != "" {
		return s.Value
	}
	return s.Default
}
