package main

import (
	"fmt"
	"io"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

// printCRDs writes the CRDs the test bed needs as virt-operator installs them (kubevirt/kubevirt
// pkg/virt-operator/resource/generate/components/crds.go), each a YAML document: VirtualMachine and
// VirtualMachineInstance, and for the VirtualMachine controller (controller.go) KubeVirt (its configuration) and
// the four instancetype and preference kinds (its instancetype controller watches them), and for the
// VirtualMachineInstance controller (vmicontroller.go) VirtualMachineInstanceMigration (it watches migrations). Their schemas come from
// components/validations_generated.go; a CRD without one is an error, not a permissive CRD.
func printCRDs(w io.Writer) error {
	for _, gen := range []func() (*extv1.CustomResourceDefinition, error){
		components.NewVirtualMachineCrd,
		components.NewVirtualMachineInstanceCrd,
		components.NewKubeVirtCrd,
		components.NewVirtualMachineInstancetypeCrd,
		components.NewVirtualMachineClusterInstancetypeCrd,
		components.NewVirtualMachinePreferenceCrd,
		components.NewVirtualMachineClusterPreferenceCrd,
		components.NewVirtualMachineInstanceMigrationCrd,
	} {
		crd, err := gen()
		if err != nil {
			return err
		}
		if err := checkSchema(crd); err != nil {
			return err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return err
		}
		delete(obj, "status") // written by the API server
		if meta, ok := obj["metadata"].(map[string]any); ok {
			delete(meta, "creationTimestamp")
		}
		out, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", out); err != nil {
			return err
		}
	}
	return nil
}

// checkSchema fails when a version of crd has no structural schema with a spec: KubeVirt skips versions whose
// validation it cannot find (components.patchValidation), which would leave the CRD accepting anything.
func checkSchema(crd *extv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		s := v.Schema
		if s == nil || s.OpenAPIV3Schema == nil || s.OpenAPIV3Schema.Properties["spec"].Type != "object" {
			return fmt.Errorf("CRD %s version %s has no schema with a spec object: KubeVirt's generated validation was not applied", crd.Name, v.Name)
		}
	}
	return nil
}
