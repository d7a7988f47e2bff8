// Package core names the VirtualMachineTemplate API as KubeVirt's pkg/controller and pkg/storage/admitters refer
// to it. A stand-in: see ../../README.md.
package core

// The API group and resource names of VirtualMachineTemplate, as in KubeVirt v1.9.0's bundled virt-template
// manifests (kubevirt/kubevirt pkg/virt-operator/resource/generate/components/data/virt-template).
const (
	GroupName            = "template.kubevirt.io"
	SingularResourceName = "virtualmachinetemplate"
	PluralResourceName   = "virtualmachinetemplates"
)
