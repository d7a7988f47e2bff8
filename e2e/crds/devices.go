package crds

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// DevicesGroup is the API group of Harvester's pcidevices-controller add-on.
const DevicesGroup = "devices.harvesterhci.io"

// deviceKinds are the add-on's kinds the driver's pre-flight check reads, and the USB claim beside them.
var deviceKinds = []struct{ kind, plural string }{
	{"PCIDevice", "pcidevices"},
	{"PCIDeviceClaim", "pcideviceclaims"},
	{"USBDevice", "usbdevices"},
	{"USBDeviceClaim", "usbdeviceclaims"},
}

// DeviceAddOn returns stand-ins for the CRDs of Harvester's pcidevices-controller add-on, which a Harvester has
// only while the add-on is enabled (the default bed has them not). Their group, kinds, names, scope (cluster) and
// status subresource are those of github.com/harvester/pcidevices pkg/crd/crd.go; their schema keeps whatever
// fields it is given. They are made here, not taken from the add-on's module as package upstream takes Harvester's
// CRDs: Harvester's go.mod does not require that module, so the build list pins no version of it.
func DeviceAddOn() []*unstructured.Unstructured {
	anything := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	out := make([]*unstructured.Unstructured, 0, len(deviceKinds))
	for _, k := range deviceKinds {
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": k.plural + "." + DevicesGroup},
			"spec": map[string]any{
				"group": DevicesGroup,
				"scope": "Cluster",
				"names": map[string]any{"kind": k.kind, "listKind": k.kind + "List", "plural": k.plural, "singular": strings.ToLower(k.kind)},
				"versions": []any{map[string]any{
					"name": "v1beta1", "served": true, "storage": true,
					"subresources": map[string]any{"status": map[string]any{}},
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type":       "object",
						"properties": map[string]any{"spec": anything, "status": anything},
					}},
				}},
			},
		}})
	}
	return out
}

// Remove deletes the CRDs among objs and waits (up to a minute) until they are gone, their objects with them:
// the API server then no longer serves their resources.
func Remove(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crdClient := dyn.Resource(crdResource)
	var names []string
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := crdClient.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete CRD %s: %w", o.GetName(), err)
		}
		names = append(names, o.GetName())
	}
	deadline := time.Now().Add(time.Minute)
	for _, n := range names {
		for {
			_, err := crdClient.Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s is still there a minute after its deletion (last error: %v)", n, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}
