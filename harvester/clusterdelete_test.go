package harvester

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// No test reads the cluster its process may run in (a CI pod's): Remove's read of Rancher's cluster is faked by the
// tests that want one (withRancherCluster); e2e/scenarios reads a real one from a Job's mounts.
func TestMain(m *testing.M) {
	localCluster = func() (clusterReader, error) { return nil, kube.ErrNotInCluster }
	os.Exit(m.Run())
}

// fakeRancherCluster is Rancher's cluster as a rm Job of namespace fleet-default reads it: the Cluster API Clusters
// there, or err.
type fakeRancherCluster struct {
	clusters map[string]kube.ClusterMeta
	err      error
	asked    []string
}

func (f *fakeRancherCluster) Namespace() string { return "fleet-default" }

func (f *fakeRancherCluster) Cluster(_ context.Context, name string) (kube.ClusterMeta, error) {
	f.asked = append(f.asked, name)
	if f.err != nil {
		return kube.ClusterMeta{}, f.err
	}
	c, ok := f.clusters[name]
	if !ok {
		return kube.ClusterMeta{}, apierrors.NewNotFound(schema.GroupResource{Group: kube.CAPIGroup, Resource: "clusters"}, name)
	}
	return c, nil
}

// withRancherCluster makes the test's removes run as in Rancher's Job with f as Rancher's cluster.
func withRancherCluster(t *testing.T, f *fakeRancherCluster) {
	old := localCluster
	localCluster = func() (clusterReader, error) { return f, nil }
	t.Cleanup(func() { localCluster = old })
}

// A machine of the second name, whose VM Rancher never marks, takes its guest cluster's volumes when its Cluster
// API Cluster is being deleted, as Rancher's cleanup makes a harvester machine do; else, or when the Cluster says
// to keep them, or cannot be read, they stay, and what could not be read is said.
func TestRemoveTakesTheGuestVolumesOfADeletedCluster(t *testing.T) {
	deleting := &metav1.Time{}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: kube.CAPIGroup, Resource: "clusters"}, "gc8", errors.New(`User "system:serviceaccount:fleet-default:m1-machine-provision" cannot get resource "clusters"`))
	all := "m1-disk-0-abcde,pvc-csi-data,pvc-unattached-csi"
	for _, c := range []struct {
		name    string
		rancher *fakeRancherCluster
		driver  string
		removed string // the claims marked for removal
		info    string // in the Info log; "" for nothing about the cluster
	}{
		{"not in Rancher's Job (the CLI)", nil, identity.Release, "m1-disk-0-abcde", ""},
		{"the cluster is not being deleted", &fakeRancherCluster{clusters: map[string]kube.ClusterMeta{"gc8": {Name: "gc8"}}}, identity.Release, "m1-disk-0-abcde", ""},
		{"the cluster is being deleted", &fakeRancherCluster{clusters: map[string]kube.ClusterMeta{"gc8": {Name: "gc8", DeletionTimestamp: deleting}}}, identity.Release, all,
			"Cluster fleet-default/gc8 is being deleted: removing the volumes of its guest cluster gc8 with VM default/m1"},
		{"being deleted, and told to keep them", &fakeRancherCluster{clusters: map[string]kube.ClusterMeta{"gc8": {Name: "gc8", DeletionTimestamp: deleting,
			Annotations: map[string]string{skipCleanupAnnotation: "true"}}}}, identity.Release, "m1-disk-0-abcde",
			"its annotation harvesterhci.io/skipHarvesterMachineProvisionCleanup=true keeps the volumes of its guest cluster gc8"},
		{"another cluster is being deleted", &fakeRancherCluster{clusters: map[string]kube.ClusterMeta{"gc9": {Name: "gc9", DeletionTimestamp: deleting}}}, identity.Release, "m1-disk-0-abcde", ""},
		{"no Role to read it", &fakeRancherCluster{err: forbidden}, identity.Release, "m1-disk-0-abcde",
			"Cannot tell whether cluster fleet-default/gc8 is being deleted (clusters.cluster.x-k8s.io \"gc8\" is forbidden: User \"system:serviceaccount:fleet-default:m1-machine-provision\" cannot get resource \"clusters\"): if it is, the volumes of its guest cluster are kept in Harvester. To remove them with the cluster, install the chart hcivm's Role rke2-machine-provisioner"},
		{"no Role, the built-in name (Rancher marks its VMs)", &fakeRancherCluster{err: forbidden}, identity.Canonical, "m1-disk-0-abcde", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			info := &kubefake.SyncBuffer{}
			kubefake.CaptureLogs(t, info, &kubefake.SyncBuffer{})
			if c.rancher != nil {
				withRancherCluster(t, c.rancher)
			}
			ctx := context.Background()
			for _, pvc := range []struct{ name, cluster string }{{"pvc-unattached-csi", "gc8"}, {"pvc-other-cluster", "gc9"}} {
				fc.OK(kube.Create(ctx, fc.C, kube.Claims, "default", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
					Name: pvc.name, Namespace: "default", Labels: map[string]string{config.LabelGuestCluster: pvc.cluster}}}))
			}
			fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false, "pvc-csi-data": true}, nil)
			marks := fc.recordMarks()
			d := rmDriver(fc, "m1", "gc8")
			id, err := identity.New(c.driver, flagNames())
			if err != nil {
				t.Fatal(err)
			}
			d.id = id
			if err := d.Remove(); err != nil {
				t.Fatal(err)
			}
			if marks.removed != c.removed || marks.all != (c.removed == all) {
				t.Errorf("removedPersistentVolumeClaims = %q, removeAllPersistentVolumeClaims marked %v; want %q", marks.removed, marks.all, c.removed)
			}
			if c.rancher != nil && strings.Join(c.rancher.asked, ",") != "gc8" {
				t.Errorf("asked about Clusters %v, want gc8, the machine's", c.rancher.asked)
			}
			said := strings.Contains(info.String(), "Cluster fleet-default") || strings.Contains(info.String(), "Cannot tell")
			if (c.info == "") == said || !strings.Contains(info.String(), c.info) {
				t.Errorf("Info log lacks %q (or says something it should not):\n%s", c.info, info.String())
			}
		})
	}
}

// A VM Rancher marked is not asked about: Rancher's own cleanup decided.
func TestRemoveAsksNothingOfAVMRancherMarked(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	f := &fakeRancherCluster{}
	withRancherCluster(t, f)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false, "pvc-csi-data": true}, map[string]string{config.AnnotationRemoveAllPVCs: "true"})
	marks := fc.recordMarks()
	if err := rmDriver(fc, "m1", "gc8").Remove(); err != nil {
		t.Fatal(err)
	}
	if marks.removed != "m1-disk-0-abcde,pvc-csi-data" || len(f.asked) != 0 {
		t.Errorf("removed %q, asked about %v", marks.removed, f.asked)
	}
}

// marks are the annotations Remove writes on a VM before deleting it.
type marks struct {
	removed string // removedPersistentVolumeClaims
	all     bool   // removeAllPersistentVolumeClaims=true
}

// recordMarks captures the annotations of the driver's last update of a VM.
func (fc *fakeCluster) recordMarks() *marks {
	m := &marks{}
	fc.KV.PrependReactor("update", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if vm, ok := a.(k8stesting.UpdateAction).GetObject().(*kubevirtv1.VirtualMachine); ok {
			m.removed, m.all = vm.Annotations[config.AnnotationRemovedPVCs], vm.Annotations[config.AnnotationRemoveAllPVCs] == "true"
		}
		return false, nil, nil
	})
	return m
}
