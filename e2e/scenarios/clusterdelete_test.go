package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/harvester/docker-machine-driver-harvester/e2e/crds"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/e2e/upstream"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// capiClusters is Cluster API's Cluster, as the CRD the bed installs serves it (upstream.CAPIClusterCRD).
var capiClusters = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "clusters"}

// Deleting a cluster of the second name removes its guest cluster's volumes, as Rancher's cleanup makes its
// built-in driver do: the real rancher-machine runs `rm -y --update-config` as Rancher's removal Job runs it — in a
// mount namespace where the Job's ServiceAccount is mounted where Kubernetes mounts it, with the API server in its
// environment — and the bed's kube-apiserver is Rancher's cluster too: Cluster API's own Cluster CRD, a Cluster of
// the cluster's name in a fleet workspace, the chart's Role rke2-machine-provisioner there (rendered by helm from
// package/helm/hcivm) and Rancher's binding of the Job's ServiceAccount to it (rancher/rancher
// pkg/controllers/capr/machineprovision template.go, objects: <job>-extension). A node removed from a live cluster
// leaves the CSI volume; once the Cluster is being deleted, the next removal takes it (and marks the VM as Rancher
// would); in a workspace without the Role the removal says it cannot tell, and keeps it.
func TestClusterDeleteRemovesGuestVolumes(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)        // Harvester's VM namespace
	fleet := b.Namespace(t)     // Rancher's fleet workspace, with the chart's Role
	bareFleet := b.Namespace(t) // one without it
	ctx := context.Background()
	wrap := rancherJobMounts(t)
	installCAPI(t, b)
	applyChartRole(t, b, fleet)
	dyn, err := dynamic.NewForConfig(b.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	const guest = "gc6"
	for _, w := range []string{fleet, bareFleet} {
		capiCluster(t, dyn, w, guest)
	}
	const csiVolume, otherVolume = "pvc-" + guest + "-data", "pvc-gc7-data"
	for claim, cluster := range map[string]string{csiVolume: guest, otherVolume: "gc7"} {
		guestVolume(t, b, ns, claim, cluster)
	}

	cli := newCLI(t, b.AdminKubeconfig())
	cli.PluginDir = secondNamePluginDir(t, identity.Release)
	cli.Env = rancherCredentialEnv(identity.Release, map[string]string{
		identity.Release + "credentialConfig-kubeconfigContent": base64.StdEncoding.EncodeToString(b.AdminKubeconfig()),
	})
	config := secondNameMachineConfig(ns)
	config["clusterName"] = guest
	script := filepath.Join(t.TempDir(), "install.sh")
	if err := os.WriteFile(script, []byte(installScript), 0o644); err != nil {
		t.Fatal(err)
	}
	create := append([]string{"create", "--driver=" + identity.Release, "--custom-install-script=" + script}, rancherArgs(identity.Release, config)...)
	for _, m := range []string{"gc6-pool1-a", "gc6-pool1-b", "gc6-pool1-c"} {
		quiet(t, cli.must(entrypointSplit(append(create[:len(create):len(create)], m))...))
	}
	rmInJob := func(workspace, machine string) string {
		t.Helper()
		job := cli.CLI
		job.Wrap = append(append([]string(nil), wrap...), rancherJobServiceAccount(t, b, workspace, machine))
		job.Env = append(append([]string(nil), cli.Env...), kubernetesService(t, b)...)
		r := job.Run(ctx, nil, "rm", "-y", "--update-config", machine)
		if r.Err != nil {
			t.Fatalf("%s", r)
		}
		return r.Output
	}

	// A node of a live cluster: the guest cluster's volume stays.
	out := rmInJob(fleet, "gc6-pool1-a")
	if strings.Contains(out, "is being deleted") || strings.Contains(out, "Cannot tell") {
		t.Errorf("the removal from a live cluster says something of its deletion:\n%s", out)
	}
	claimStays(t, b, ns, csiVolume)

	// The cluster is being deleted, in a workspace without the Role: cannot tell, the volume stays.
	deleteCAPICluster(t, dyn, bareFleet, guest)
	out = rmInJob(bareFleet, "gc6-pool1-b")
	if want := "Cannot tell whether cluster " + bareFleet + "/" + guest + " is being deleted"; !strings.Contains(out, want) || !strings.Contains(out, "is forbidden") ||
		!strings.Contains(out, "install the chart hcivm's Role rke2-machine-provisioner") {
		t.Errorf("the removal without the Role does not say %q, forbidden, and the fix:\n%s", want, out)
	}
	claimStays(t, b, ns, csiVolume)

	// The cluster is being deleted, with the Role: the volume goes with the last machine's removal.
	deleteCAPICluster(t, dyn, fleet, guest)
	watchVM := vmMarks(t, b, ns, "gc6-pool1-c")
	out = rmInJob(fleet, "gc6-pool1-c")
	if want := "Cluster " + fleet + "/" + guest + " is being deleted: removing the volumes of its guest cluster " + guest; !strings.Contains(out, want) {
		t.Errorf("the removal does not say %q:\n%s", want, out)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := b.WaitPVC(waitCtx, ns, csiVolume, "deleted with the cluster's last VM", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if marks := watchVM(); !strings.Contains(marks.removed, csiVolume) || !marks.all {
		t.Errorf("the VM was marked %+v, want %s among its claims and removeAllPersistentVolumeClaims", marks, csiVolume)
	}
	claimStays(t, b, ns, otherVolume) // another guest cluster's
	if err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, otherVolume, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, b, ns)
}

// rancherJobMounts returns the command that runs rancher-machine as Rancher's Job does, its ServiceAccount mounted
// where Kubernetes mounts a pod's (k8s.io/client-go rest InClusterConfig reads it there): in a mount namespace of
// its own, over a tmpfs on /var/run that only it sees. The directory of the token, CA and namespace comes last.
func rancherJobMounts(t *testing.T) []string {
	t.Helper()
	const script = `set -e; d=/var/run/secrets/kubernetes.io/serviceaccount; src=$1; shift
mount -t tmpfs -o size=1m,mode=0755 tmpfs /var/run; mkdir -p $d; cp "$src"/token "$src"/ca.crt "$src"/namespace $d/
exec "$@"`
	wrap := []string{"unshare", "--mount", "--fork", "--propagation", "private"}
	if os.Geteuid() != 0 {
		wrap = append([]string{"unshare", "--user", "--map-root-user"}, wrap[1:]...)
	}
	wrap = append(wrap, "sh", "-c", script, "job")
	probe := t.TempDir()
	for _, f := range []string{"token", "ca.crt", "namespace"} {
		if err := os.WriteFile(filepath.Join(probe, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(wrap[0], append(wrap[1:], probe, "test", "-s", "/var/run/secrets/kubernetes.io/serviceaccount/token")...).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "a mount namespace (unshare --mount, as root or in a user namespace)", fmt.Errorf("%v: %s", err, bytes.TrimSpace(out)))
	}
	return wrap
}

// rancherJobServiceAccount makes the ServiceAccount of machine's removal Job in workspace as Rancher makes it
// (template.go objects: <machine>-machine-provision, bound to the Role rke2-machine-provisioner by
// <job>-extension), and writes its mounted files — a token, the API server's CA, the namespace — into a directory,
// which it returns.
func rancherJobServiceAccount(t *testing.T, b *testbed.Bed, workspace, machine string) string {
	t.Helper()
	ctx := context.Background()
	name := machine + "-machine-provision"
	sa, err := b.Kube.CoreV1().ServiceAccounts(workspace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-extension", Namespace: workspace},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: workspace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "rke2-machine-provisioner"},
	}
	if _, err := b.Kube.RbacV1().RoleBindings(workspace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := b.Kube.CoreV1().ServiceAccounts(workspace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for f, data := range map[string][]byte{"token": []byte(token.Status.Token), "ca.crt": b.AdminConfig().CAData, "namespace": []byte(workspace)} {
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kubernetesService is the environment Kubernetes gives a pod for the API server (what InClusterConfig reads).
func kubernetesService(t *testing.T, b *testbed.Bed) []string {
	t.Helper()
	u, err := url.Parse(b.AdminConfig().Host)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port()}
}

// installCAPI installs Cluster API's Cluster CRD on the bed (idempotent).
func installCAPI(t *testing.T, b *testbed.Bed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := upstream.CAPIClusterCRD.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Install(ctx, b.AdminConfig(), objs); err != nil {
		t.Fatal(err)
	}
}

// applyChartRole renders the chart's Role for workspace with helm (hack/tools.sh helm) and applies it.
func applyChartRole(t *testing.T, b *testbed.Bed, workspace string) {
	t.Helper()
	helmDir, err := repo.ToolDir(context.Background(), "helm", "DMDH_HELM_BIN")
	if err != nil {
		testenv.Unavailable(t, "helm", err)
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(helmDir, "helm"), "template", "hcivm", filepath.Join(root, "package", "helm", "hcivm"),
		"-n", "cattle-ui-plugin-system", "--set", "nodeDriver.enabled=false,plugin.enabled=false", "--set", "volumeCleanup.namespaces={"+workspace+"}")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	objs, err := apply.Decode(out)
	if err != nil || len(objs) != 1 || objs[0].GetKind() != "Role" {
		t.Fatalf("the chart renders %d objects (%v), want its Role:\n%s", len(objs), err, out)
	}
	a, err := apply.New(b.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(context.Background(), objs[0]); err != nil {
		t.Fatal(err)
	}
}

// capiCluster makes the Cluster API Cluster of a provisioning cluster, held by a finalizer of the test so that its
// deletion leaves it being deleted (as Cluster API's own finalizer does while machines remain); the test's end lets
// it go.
func capiCluster(t *testing.T, dyn dynamic.Interface, workspace, name string) {
	t.Helper()
	c := &unstructured.Unstructured{}
	c.SetAPIVersion(capiClusters.Group + "/" + capiClusters.Version)
	c.SetKind("Cluster")
	c.SetNamespace(workspace)
	c.SetName(name)
	c.SetFinalizers([]string{"e2e.harvesterhci.io/held"})
	clusters := dyn.Resource(capiClusters).Namespace(workspace)
	if _, err := clusters.Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = clusters.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
}

func deleteCAPICluster(t *testing.T, dyn dynamic.Interface, workspace, name string) {
	t.Helper()
	if err := dyn.Resource(capiClusters).Namespace(workspace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// guestVolume makes a claim as the guest cluster's Harvester CSI driver makes one: labelled with its guest cluster.
func guestVolume(t *testing.T, b *testbed.Bed, ns, name, cluster string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"guestcluster.harvesterhci.io/name": cluster}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// claimStays fails the test when the claim is gone or being deleted.
func claimStays(t *testing.T, b *testbed.Bed, ns, name string) {
	t.Helper()
	pvc, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp != nil {
		t.Errorf("claim %s/%s of a guest cluster is gone or going (%v)", ns, name, err)
	}
}

// vmMark is what a removal marked on a VM before deleting it.
type vmMark struct {
	removed string // removedPersistentVolumeClaims
	all     bool   // removeAllPersistentVolumeClaims=true
}

// vmMarks watches VM ns/name from now and returns a function that says its marks as its deletion left them (the
// object of the watch's Deleted event), once it is gone.
func vmMarks(t *testing.T, b *testbed.Bed, ns, name string) func() vmMark {
	t.Helper()
	w, err := b.Virt.KubevirtV1().VirtualMachines(ns).Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return func() vmMark {
		timeout := time.After(time.Minute)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("the watch of VM %s/%s ended before its deletion", ns, name)
				}
				if ev.Type != watch.Deleted {
					continue
				}
				a := ev.Object.(metav1.Object).GetAnnotations()
				return vmMark{removed: a["harvesterhci.io/removedPersistentVolumeClaims"], all: a["harvesterhci.io/removeAllPersistentVolumeClaims"] == "true"}
			case <-timeout:
				t.Fatalf("VM %s/%s was not deleted within a minute", ns, name)
			}
		}
	}
}
