package harvester

import (
	"context"
	"errors"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// Deleting a cluster removes its guest cluster's volumes too (the CSI driver's, which the guest cluster's workloads
// made), on every route. Rancher marks each VM of a HarvesterMachine with config.AnnotationRemoveAllPVCs once the
// machine's Cluster API Cluster is being deleted (rancher/rancher pkg/controllers/provisioningv2/harvestercleanup
// controller.go onChange, v2.12.12 to v2.15.0: for the kind HarvesterMachine alone, with the cloud credential of the
// provisioning cluster), and Remove takes the guest cluster's volumes of a VM so marked (claimsToRemove). A machine
// of a second name (HcivmMachine) is never marked; so Remove itself asks what harvestercleanup asks, from where it
// runs: Rancher runs it in a Job of the cluster's namespace, whose ServiceAccount Rancher binds to the Role
// rke2-machine-provisioner of that namespace (machineprovision template.go), which the hcivm chart makes, allowed to
// get clusters.cluster.x-k8s.io (package/helm/hcivm templates/volumecleanup.yaml). Outside such a Job — the CLI —
// nothing is asked. docs/install-rancher.md says why this and not a controller of the chart's own.

// skipCleanupAnnotation on the Cluster API Cluster keeps the guest cluster's volumes on delete, as it does for
// Rancher's own cleanup (harvestercleanup.go skipHarvMachineProvCleanupAnnotationKey, a boolean).
const skipCleanupAnnotation = "harvesterhci.io/skipHarvesterMachineProvisionCleanup"

// clusterReader reads the Cluster API Cluster a machine belongs to, in Rancher's cluster.
type clusterReader interface {
	// Namespace is the Job's, the machine's and its cluster's namespace.
	Namespace() string
	Cluster(ctx context.Context, name string) (kube.ClusterMeta, error)
}

// localCluster returns the reader of the cluster the process runs in (kube.InCluster): Rancher's, in Rancher's
// rm Job; kube.ErrNotInCluster elsewhere. Tests replace it.
var localCluster = func() (clusterReader, error) {
	cfg, ns, err := kube.InCluster()
	if err != nil {
		return nil, err
	}
	return inCluster{cfg: cfg, namespace: ns}, nil
}

type inCluster struct {
	cfg       *rest.Config
	namespace string
}

func (c inCluster) Namespace() string { return c.namespace }

func (c inCluster) Cluster(ctx context.Context, name string) (kube.ClusterMeta, error) {
	return kube.ReadCAPICluster(ctx, c.cfg, c.namespace, name)
}

// removesGuestVolumes reports whether removing vm is to take its guest cluster's volumes too: Rancher marked it
// (config.AnnotationRemoveAllPVCs), or the Cluster API Cluster of the machine's cluster (d.ClusterName, in the Job's
// namespace) is being deleted and does not say to keep them. A failure to tell keeps the volumes and says so.
func (d *Driver) removesGuestVolumes(ctx context.Context, vm *kubevirtv1.VirtualMachine) bool {
	if vm.Annotations[config.AnnotationRemoveAllPVCs] == "true" {
		return true
	}
	r, err := localCluster()
	switch {
	case errors.Is(err, kube.ErrNotInCluster):
		return false // not Rancher's Job: a machine of the CLI
	case err != nil:
		d.cannotTell("", err)
		return false
	case d.ClusterName == "":
		logging.Debugf("VM %s/%s names no guest cluster (--%s): its cluster's deletion is not asked about", vm.Namespace, vm.Name, d.id.Flag(config.FlagClusterName))
		return false
	}
	key := r.Namespace() + "/" + d.ClusterName
	cluster, err := r.Cluster(ctx, d.ClusterName)
	switch {
	case apierrors.IsNotFound(err):
		// No such Cluster: not a machine of Rancher's (the CLI in some pod), or its Cluster is gone already.
		logging.Debugf("No Cluster %s in this cluster: the guest cluster's volumes are kept", key)
		return false
	case err != nil:
		d.cannotTell(key, err)
		return false
	case cluster.DeletionTimestamp == nil:
		return false
	}
	if skip, err := strconv.ParseBool(cluster.Annotations[skipCleanupAnnotation]); err == nil && skip {
		logging.Infof("Cluster %s is being deleted, and its annotation %s=true keeps the volumes of its guest cluster %s", key, skipCleanupAnnotation, d.ClusterName)
		return false
	}
	logging.Infof("Cluster %s is being deleted: removing the volumes of its guest cluster %s with VM %s/%s", key, d.ClusterName, vm.Namespace, vm.Name)
	return true
}

// cannotTell says that whether the machine's cluster (key, "" when unknown) is being deleted cannot be told, so
// its guest cluster's volumes are kept. Under the driver's own name it is said at debug level only: Rancher's own
// cleanup marks those VMs (harvestercleanup), and Rancher's image has no Role for the driver to read the Cluster.
func (d *Driver) cannotTell(key string, err error) {
	what := "the machine's cluster"
	if key != "" {
		what = "cluster " + key
	}
	if d.id.Name() == identity.Canonical {
		logging.Debugf("Cannot tell whether %s is being deleted: %v", what, err)
		return
	}
	fix := "check that Rancher's API server answers from the removal's Job"
	if apierrors.IsForbidden(err) {
		fix = "install the chart hcivm's Role rke2-machine-provisioner in the cluster's namespace (its value volumeCleanup.namespaces)"
	}
	logging.Infof("Cannot tell whether %s is being deleted (%s): if it is, the volumes of its guest cluster are kept in Harvester. To remove them with the cluster, %s",
		what, kube.ServerMessage(err), fix)
}
