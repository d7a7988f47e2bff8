package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// maxVMNameLength keeps the VM name a valid label value: it is copied into the harvesterhci.io/vmName label,
// and label values over 63 characters make VM creation fail (harvester/harvester#7467).
const maxVMNameLength = validation.LabelValueMaxLength

// parseRef reads "namespace/name" or "name" (then in defaultNamespace), the form every reference flag uses.
func parseRef(value, defaultNamespace string) (Ref, error) {
	ns, name := defaultNamespace, value
	if i := strings.IndexByte(value, '/'); i >= 0 {
		ns, name = value[:i], value[i+1:]
		if ns == "" {
			return Ref{}, fmt.Errorf("must be namespace/name or name, got %q (empty namespace)", value)
		}
	}
	if strings.Contains(name, "/") {
		return Ref{}, fmt.Errorf("must be namespace/name or name, got %q (more than one /)", value)
	}
	if name == "" {
		return Ref{}, fmt.Errorf("must be namespace/name or name, got %q (empty name)", value)
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return Ref{}, fmt.Errorf("namespace %q of %q is not a valid namespace name: %s", ns, value, msgs[0])
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return Ref{}, fmt.Errorf("name %q of %q is not a valid Kubernetes name: %s", name, value, msgs[0])
	}
	return Ref{Namespace: ns, Name: name}, nil
}

// checkVMName reports why a machine name cannot name a Harvester VM, or nil.
func checkVMName(name string) error {
	if name == "" {
		return fmt.Errorf("machine name is empty")
	}
	if len(name) > maxVMNameLength {
		return fmt.Errorf("machine name %q is %d characters long; Harvester VM names are at most %d", name, len(name), maxVMNameLength)
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("machine name %q cannot name a Harvester VM: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
	}
	return nil
}
