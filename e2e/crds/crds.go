// Package crds installs Harvester's shape on a bare control plane: Harvester's own CRDs and ClusterRoles
// (VirtualMachineImage, KeyPair, Setting, harvesterhci.io:cloudprovider, harvesterhci.io:csi-driver), the
// NetworkAttachmentDefinition CRD, all read from ../shared/crds, and the KubeVirt VirtualMachine and
// VirtualMachineInstance CRDs in kubevirt.yaml beside this file.
package crds

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

//go:embed kubevirt.yaml
var kubevirtYAML []byte

// KubeVirt returns the VirtualMachine and VirtualMachineInstance CRDs.
func KubeVirt() ([]*unstructured.Unstructured, error) { return apply.Decode(kubevirtYAML) }

// Shared reads every *.yaml in dir (empty: ../shared/crds beside the checkout, or $DMDH_SHARED_CRDS).
func Shared(dir string) ([]*unstructured.Unstructured, error) {
	if dir == "" {
		var err error
		if dir, err = repo.SharedCRDDir(); err != nil {
			return nil, err
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml in %s: expected Harvester's CRDs and ClusterRoles there", dir)
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := apply.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Install server-side-applies the shared manifests from sharedDir (see Shared) and the KubeVirt CRDs, then waits
// until every CRD among them is Established. Running it again changes nothing.
func Install(ctx context.Context, cfg *rest.Config, sharedDir string) error {
	shared, err := Shared(sharedDir)
	if err != nil {
		return err
	}
	kv, err := KubeVirt()
	if err != nil {
		return err
	}
	a, err := apply.New(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, obj := range append(shared, kv...) {
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
