package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// subnetCRD names Kube-OVN's Subnet CRD, whose presence decides whether Harvester's webhook server gives its
// mutator a Subnet cache (pkg/webhook/server/server.go subnetsCRDName).
const subnetCRD = "subnets.kubeovn.io"

// subnetCRDPresent tells, as Harvester's webhook server does once at start (pkg/webhook/server/server.go
// isSubnetsCRDPresent), whether the Subnet CRD exists and is not being deleted. Harvester's server also restarts
// itself when that changes (watchAndTriggerReload, every 30 s); the test bed installs its CRDs before the webhook
// starts and never removes them, so this one does not.
func subnetCRDPresent(ctx context.Context, client dynamic.Interface) (bool, error) {
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := client.Resource(crds).Get(ctx, subnetCRD, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up CRD %s: %w", subnetCRD, err)
	}
	return crd.GetDeletionTimestamp() == nil, nil
}
