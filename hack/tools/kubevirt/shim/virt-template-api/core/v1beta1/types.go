// Package v1beta1 declares the VirtualMachineTemplate type KubeVirt's informer factory names. A stand-in with
// no fields beyond object metadata: see ../../../README.md.
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// VirtualMachineTemplate is a placeholder for the virt-template API type.
type VirtualMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (in *VirtualMachineTemplate) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &VirtualMachineTemplate{TypeMeta: in.TypeMeta}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}
