package upstream

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
)

var kubevirtCRDs struct {
	once sync.Once
	objs []*unstructured.Unstructured
	err  error
}

// KubeVirtCRDs returns the CRDs of VirtualMachine, VirtualMachineInstance, KubeVirt, the instancetype and
// preference kinds and VirtualMachineInstanceMigration (the VMI controller watches migrations) as KubeVirt's virt-operator generates them, with their structural schemas (`kubevirt crds`; see KubeVirtTool). They are made once per process.
func KubeVirtCRDs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	kubevirtCRDs.once.Do(func() { kubevirtCRDs.objs, kubevirtCRDs.err = generateKubeVirtCRDs(ctx) })
	if kubevirtCRDs.err != nil {
		return nil, kubevirtCRDs.err
	}
	out := make([]*unstructured.Unstructured, len(kubevirtCRDs.objs))
	for i, o := range kubevirtCRDs.objs {
		out[i] = o.DeepCopy()
	}
	return out, nil
}

func generateKubeVirtCRDs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	tool, err := KubeVirtTool(ctx)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, tool, "crds")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s crds: %w: %s", tool, err, strings.TrimSpace(stderr.String()))
	}
	objs, err := apply.Decode(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("decode the output of %s crds: %w", tool, err)
	}
	if len(objs) != 8 {
		return nil, fmt.Errorf("%s crds printed %d objects, want the CRDs of VirtualMachine, VirtualMachineInstance, KubeVirt, the 4 instancetype and preference kinds and VirtualMachineInstanceMigration", tool, len(objs))
	}
	return objs, nil
}
