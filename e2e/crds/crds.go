// Package crds installs Harvester's shape on a bare control plane: the upstream manifests of package upstream
// (Harvester's own CRDs and ClusterRoles, the NetworkAttachmentDefinition CRD, and KubeVirt's VirtualMachine and
// VirtualMachineInstance CRDs as virt-operator generates them, structural schemas included).
package crds

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
)

// Install server-side-applies objs (upstream.Load) and waits until every CRD among them is Established.
// Running it again changes nothing.
func Install(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	a, err := apply.New(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, obj := range objs {
		if _, err := a.Apply(ctx, obj); err != nil {
			return err
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			names = append(names, obj.GetName())
		}
	}
	if err := WaitEstablished(ctx, cfg, names...); err != nil {
		return fmt.Errorf("%w (installed: %s)", err, strings.Join(names, ", "))
	}
	return nil
}
