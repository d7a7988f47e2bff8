// Package virttemplate declares the client constructor KubeVirt's informer factory calls for
// VirtualMachineTemplates. A stand-in that refuses to build a client: see ../../README.md.
package virttemplate

import (
	"errors"

	"k8s.io/client-go/rest"
)

// Clientset would be the virt-template clientset.
type Clientset struct{}

// TemplateV1beta1 would return the template.kubevirt.io/v1beta1 client.
func (*Clientset) TemplateV1beta1() *TemplateV1beta1Client { return &TemplateV1beta1Client{} }

// TemplateV1beta1Client would be the template.kubevirt.io/v1beta1 client.
type TemplateV1beta1Client struct{}

// RESTClient would return the REST client of template.kubevirt.io/v1beta1.
func (*TemplateV1beta1Client) RESTClient() rest.Interface { return nil }

// NewForConfig always fails: this build of KubeVirt has no virt-template client.
func NewForConfig(*rest.Config) (*Clientset, error) {
	return nil, errors.New("kubevirt.io/virt-template-client-go is a stand-in in this tool (hack/tools/kubevirt/shim): VirtualMachineTemplates are not supported")
}
