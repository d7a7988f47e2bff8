package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// The one read of Rancher's own cluster the driver makes: whether the cluster a machine belongs to is being
// deleted. Rancher runs a machine's rm in a Job of the cluster's namespace with a ServiceAccount of its own
// (rancher/rancher pkg/controllers/capr/machineprovision template.go, objects), whose token Kubernetes mounts in
// the Job's pod at serviceAccountDir, beside the namespace, with the API server's address in the pod's
// environment: what client-go's rest.InClusterConfig reads (k8s.io/client-go rest/config.go). This is never the
// Harvester credential: that comes from the kubeconfig alone (harvester/connection).

// serviceAccountDir is where Kubernetes mounts a pod's ServiceAccount token, CA and namespace
// (k8s.io/client-go rest/config.go InClusterConfig; k8s.io/api core/v1 ServiceAccountRootCAKey, …).
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ErrNotInCluster is InCluster's answer outside a pod: no ServiceAccount, no Rancher Job.
var ErrNotInCluster = errors.New("not in a pod with a service account")

// InCluster returns the client configuration of the pod the process runs in and the pod's namespace, or
// ErrNotInCluster.
func InCluster() (*rest.Config, string, error) {
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, "", ErrNotInCluster
	}
	ns, err := os.ReadFile(filepath.Join(serviceAccountDir, "namespace"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", ErrNotInCluster
	}
	if err != nil {
		return nil, "", err
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, "", err
	}
	cfg.UserAgent = "docker-machine-driver-harvester"
	return cfg, strings.TrimSpace(string(ns)), nil
}

// capiClusters names Cluster API's Clusters in errors.
var capiClusters = schema.GroupResource{Group: CAPIGroup, Resource: "clusters"}

// CAPIGroup is Cluster API's group, whose Cluster Rancher makes for each of its provisioning clusters, of the same
// name and namespace (pkg/controllers/provisioningv2/provisioningcluster template.go, capiCluster).
const CAPIGroup = "cluster.x-k8s.io"

// ClusterMeta is what the driver reads of a Cluster API Cluster: its metadata.
type ClusterMeta struct {
	Name, Namespace   string
	DeletionTimestamp *metav1.Time
	Annotations       map[string]string
}

// clusterReadTimeout bounds the read: it decides only whether a remove takes more volumes.
const clusterReadTimeout = 15 * time.Second

// clusterBudget bounds each answer: a Cluster is a few KiB, the group's discovery document less.
const clusterBudget = 1 << 20

// ReadCAPICluster reads the metadata of the cluster.x-k8s.io Cluster namespace/name at the version cfg's API server
// prefers (its discovery document for the group: Rancher 2.12 to 2.14 serve v1beta1, 2.15 v1beta2 as well). A
// failure is an *apierrors.StatusError when the server answered with one (403 when the ServiceAccount may not
// get clusters, 404 when there is no such Cluster or no Cluster API at all).
func ReadCAPICluster(ctx context.Context, cfg *rest.Config, namespace, name string) (ClusterMeta, error) {
	client, err := HTTPClient(cfg)
	if err != nil {
		return ClusterMeta{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, clusterReadTimeout)
	defer cancel()
	base := strings.TrimSuffix(cfg.Host, "/")
	var group metav1.APIGroup
	if err := getJSON(ctx, client, base+"/apis/"+CAPIGroup, &group); err != nil {
		return ClusterMeta{}, err
	}
	version := group.PreferredVersion.Version
	if version == "" || strings.ContainsAny(version, "/?#") {
		return ClusterMeta{}, fmt.Errorf("the API server names no preferred version of %s", CAPIGroup)
	}
	var cluster struct{ Metadata metav1.ObjectMeta }
	path := strings.Join([]string{base, "apis", CAPIGroup, version, "namespaces", url.PathEscape(namespace), "clusters", url.PathEscape(name)}, "/")
	if err := getJSON(ctx, client, path, &cluster); err != nil {
		return ClusterMeta{}, err
	}
	m := cluster.Metadata
	if m.Name != name || m.Namespace != namespace {
		return ClusterMeta{}, fmt.Errorf("asked for Cluster %s/%s, the API server answered with %s/%s", namespace, name, m.Namespace, m.Name)
	}
	return ClusterMeta{Name: m.Name, Namespace: m.Namespace, DeletionTimestamp: m.DeletionTimestamp, Annotations: m.Annotations}, nil
}

// getJSON GETs endpoint and decodes its answer into out; a refusal is the API server's Status as an error.
func getJSON(ctx context.Context, client *http.Client, endpoint string, out any) error {
	a, err := getBounded(ctx, client, endpoint, clusterBudget)
	if err != nil {
		return err
	}
	switch {
	case a.readErr != nil:
		return fmt.Errorf("GET %s: %w", endpoint, a.readErr)
	case a.over:
		return fmt.Errorf("GET %s: the answer is over %d MiB, more than a Cluster", endpoint, clusterBudget>>20)
	case a.status != http.StatusOK:
		var status metav1.Status
		if json.Unmarshal(a.body, &status) == nil && status.Kind == "Status" {
			status.Message = bounded(status.Message)
			return &apierrors.StatusError{ErrStatus: status}
		}
		return apierrors.NewGenericServerResponse(a.status, http.MethodGet, capiClusters, "", "", 0, false)
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("GET %s: %v", endpoint, err)
	}
	return nil
}
