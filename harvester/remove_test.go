package harvester

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// rmDriver is a driver as `rancher-machine rm` loads it: only the saved state, no flags.
func rmDriver(fc *fakeCluster, machine, cluster string) *Driver {
	d := NewDriver(machine, "")
	d.VMNamespace, d.ClusterName = "default", cluster
	d.clients = fc.C
	return d
}

// vmWithVolumes creates a VM of this driver with the given claims (name → hot-plugged).
func (fc *fakeCluster) vmWithVolumes(name string, claims map[string]bool, annotations map[string]string) *kubevirtv1.VirtualMachine {
	vm := &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{config.LabelCreator: config.CreatorName}, Annotations: annotations},
		Spec:       kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{}},
	}
	for claim, hot := range claims {
		vm.Spec.Template.Spec.Volumes = append(vm.Spec.Template.Spec.Volumes, kubevirtv1.Volume{Name: claim, VolumeSource: kubevirtv1.VolumeSource{
			PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
				PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}, Hotpluggable: hot,
			}}})
	}
	created, err := fc.KV.KubevirtV1().VirtualMachines("default").Create(context.Background(), vm, metav1.CreateOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	return created
}

// recordRemovedClaims captures the removedPersistentVolumeClaims annotation the driver writes before deleting.
func (fc *fakeCluster) recordRemovedClaims() *string {
	var got string
	fc.KV.PrependReactor("update", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if vm, ok := a.(k8stesting.UpdateAction).GetObject().(*kubevirtv1.VirtualMachine); ok {
			got = vm.Annotations[config.AnnotationRemovedPVCs]
		}
		return false, nil, nil
	})
	return &got
}

// A disk given "autoDelete": false keeps its volume, even when Rancher deletes the whole cluster, and rm names it.
func TestRemoveKeepsVolumesNotToBeDeleted(t *testing.T) {
	fc := newFakeCluster(t)
	logs := kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false, "m1-disk-1-abcde": false},
		map[string]string{config.AnnotationKeptVolumes: "m1-disk-1-abcde", config.AnnotationRemoveAllPVCs: "true"})
	removed := fc.recordRemovedClaims()
	if err := rmDriver(fc, "m1", "gc8").Remove(); err != nil {
		t.Fatal(err)
	}
	if *removed != "m1-disk-0-abcde" {
		t.Errorf("removedPersistentVolumeClaims = %q; the kept volume must not be in it", *removed)
	}
	if want := "Keeping volume m1-disk-1-abcde of VM default/m1"; !strings.Contains(logs.String(), want) {
		t.Errorf("rm does not say %q:\n%s", want, logs.String())
	}
}

func TestRemoveSparesHotpluggedVolumes(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false, "pvc-csi-data": true}, nil)
	removed := fc.recordRemovedClaims()
	if err := rmDriver(fc, "m1", "gc8").Remove(); err != nil {
		t.Fatal(err)
	}
	if *removed != "m1-disk-0-abcde" {
		t.Errorf("removedPersistentVolumeClaims = %q; the guest cluster's hot-plugged CSI volume must survive a node's removal", *removed)
	}
	if vms, _, _ := fc.objects(); vms != 0 {
		t.Errorf("the VM is still there")
	}
}

func TestRemoveAllWhenRancherDeletesTheCluster(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	ctx := context.Background()
	for _, pvc := range []struct{ name, cluster string }{{"pvc-unattached-csi", "gc8"}, {"pvc-other-cluster", "gc9"}} {
		fc.OK(kube.Create(ctx, fc.C, kube.Claims, "default", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
			Name: pvc.name, Namespace: "default", Labels: map[string]string{config.LabelGuestCluster: pvc.cluster}}}))
	}
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false, "pvc-csi-data": true}, map[string]string{config.AnnotationRemoveAllPVCs: "true"})
	removed := fc.recordRemovedClaims()
	if err := rmDriver(fc, "m1", "gc8").Remove(); err != nil {
		t.Fatal(err)
	}
	if *removed != "m1-disk-0-abcde,pvc-csi-data,pvc-unattached-csi" {
		t.Errorf("removedPersistentVolumeClaims = %q", *removed)
	}
}

// driverSecret makes the cloud-init Secret this driver makes for machine vm, without its VM.
func (fc *fakeCluster) driverSecret(vm string) {
	fc.OK(kube.Create(context.Background(), fc.C, kube.Secrets, "default", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: objects.CloudInitSecretName(vm), Namespace: "default", Labels: map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: vm}}}))
}

func TestRemoveIsIdempotent(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
	fc.driverSecret("m1")
	for i := 0; i < 3; i++ {
		if err := rmDriver(fc, "m1", "").Remove(); err != nil {
			t.Fatalf("remove #%d: %v", i+1, err)
		}
	}
	fc.nothingLeft(t)
}

func TestRemoveCleansUpAfterACreateThatDied(t *testing.T) {
	// State is saved before Create; a create killed between the Secret and the VM leaves only the Secret.
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.driverSecret("m1")
	if err := rmDriver(fc, "m1", "").Remove(); err != nil {
		t.Fatal(err)
	}
	if _, _, secrets := fc.objects(); secrets != 0 {
		t.Errorf("the orphaned cloud-init Secret is still there")
	}
}

func TestRemoveRefusesForeignVMsAndSecrets(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	ctx := context.Background()
	fc.OK(fc.KV.KubevirtV1().VirtualMachines("default").Create(ctx, &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
		Name: "db", Namespace: "default", Labels: map[string]string{config.LabelCreator: "harvester"}}}, metav1.CreateOptions{}))
	fc.OK(kube.Create(ctx, fc.C, kube.Secrets, "default", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-cloudinit", Namespace: "default"}}))
	err := rmDriver(fc, "db", "").Remove()
	if err == nil || !strings.Contains(err.Error(), "refusing to delete VM default/db") {
		t.Fatalf("Remove of a VM the driver did not make: %v", err)
	}
	if vms, _, secrets := fc.objects(); vms != 1 || secrets != 1 {
		t.Errorf("foreign objects were deleted: %d VMs, %d Secrets left", vms, secrets)
	}
}

// rancher-machine's rm treats an error containing "not found" as success. No real failure may say it.
func TestRemoveFailuresNeverSayNotFound(t *testing.T) {
	tests := []struct {
		name   string
		inject error
		want   string
	}{
		{"expired credential", apierrors.NewUnauthorized("Unauthorized"), "its token has probably expired"},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "m1", errors.New("not allowed")), "not allowed to"},
		// Through Rancher's proxy, a disconnected Harvester answers 404 about the cluster, not the VM.
		{"proxy 404 about another object", apierrors.NewNotFound(schema.GroupResource{Group: "management.cattle.io", Resource: "clusters"}, "c-abc12"), "cannot read VM"},
		{"404 for the path", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}, "does not serve this API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
			fc.FailOn("get", "virtualmachines", tt.inject)
			err := rmDriver(fc, "m1", "").Remove()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Remove: %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(strings.ToLower(err.Error()), "not found") {
				t.Fatalf("rancher-machine would read this failure as success and leak the VM: %v", err)
			}
			if vms, _, _ := fc.objects(); vms != 1 {
				t.Errorf("the VM must still exist after a failed remove")
			}
		})
	}
	t.Run("unusable credential", func(t *testing.T) {
		d := NewDriver("m1", "")
		d.credentialErr = kube.ScrubNotFound(errors.New(`context "harvester" not found`))
		err := d.Remove()
		if err == nil || strings.Contains(strings.ToLower(err.Error()), "not found") {
			t.Fatalf("Remove: %v", err)
		}
	})
}

func TestIsGone(t *testing.T) {
	vmGone := apierrors.NewNotFound(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "m1")
	if !kube.IsGone(vmGone, "virtualmachines", "m1") {
		t.Error("a 404 naming the VM is gone")
	}
	if kube.IsGone(vmGone, "virtualmachines", "m2") || kube.IsGone(vmGone, "secrets", "m1") {
		t.Error("a 404 naming another object is not this object gone")
	}
	if kube.IsGone(errors.New("virtualmachines m1 not found"), "virtualmachines", "m1") {
		t.Error("only API status errors count")
	}
}

// A loaded Harvester's webhooks time out, and the API server answers 500 "failed calling webhook". rm retries the
// claims annotation and the delete (each safe to repeat: the VM's resourceVersion, its UID) and removes the
// machine; a webhook that never answers is reported as such after the retries, and the VM is left.
func TestRemoveRetriesWebhookTimeouts(t *testing.T) {
	saved := kube.TransientBackoff
	kube.TransientBackoff.Duration = time.Millisecond
	t.Cleanup(func() { kube.TransientBackoff = saved })
	webhookTimeout := apierrors.NewInternalError(errors.New(`failed calling webhook "validator.harvesterhci.io": failed to call webhook: ` +
		`Post "https://harvester-webhook.harvester-system.svc:443/v1/webhook/validation?timeout=10s": context deadline exceeded`))

	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
	removed := fc.recordRemovedClaims()
	failures := map[string]*atomic.Int32{"update": {}, "delete": {}}
	failures["update"].Store(2)
	failures["delete"].Store(1)
	for verb, left := range failures {
		fc.KV.PrependReactor(verb, "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
			if left.Add(-1) >= 0 {
				return true, nil, webhookTimeout
			}
			return false, nil, nil
		})
	}
	if err := rmDriver(fc, "m1", "").Remove(); err != nil {
		t.Fatalf("Remove through two webhook timeouts of the update and one of the delete: %v", err)
	}
	if *removed != "m1-disk-0-abcde" {
		t.Errorf("removedPersistentVolumeClaims = %q after the retries", *removed)
	}
	fc.nothingLeft(t)

	fc = newFakeCluster(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
	tries := 0
	fc.KV.PrependReactor("update", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
		tries++
		return true, nil, webhookTimeout
	})
	err := rmDriver(fc, "m1", "").Remove()
	if err == nil || !strings.Contains(err.Error(), "an admission webhook of Harvester at harvester.test:6443 did not answer") || !strings.Contains(err.Error(), "harvester-webhook pods") {
		t.Fatalf("Remove with a webhook that never answers: %v", err)
	}
	if tries != kube.TransientBackoff.Steps {
		t.Errorf("the update was tried %d times, want %d", tries, kube.TransientBackoff.Steps)
	}
	if vms, _, _ := fc.objects(); vms != 1 {
		t.Errorf("the VM must still exist after a failed remove")
	}
}

// The claims annotation is written on the VM as Remove read it; an update conflict reads the VM again (and only
// then), and the retry lands.
func TestRemoveRereadsTheVMOnlyOnAConflict(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
	removed := fc.recordRemovedClaims()
	conflict := fc.FailOn("update", "virtualmachines", apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), "m1", errors.New("the object has been modified")))
	fc.requests()
	if err := rmDriver(fc, "m1", "").Remove(); err != nil {
		t.Fatal(err)
	}
	got := fc.requests()
	if conflict.Load() != 1 || got["get virtualmachines"] != 2 || got["update virtualmachines"] != 2 {
		t.Errorf("after %d conflict: %s; want the VM read twice (before the first update and after the conflict), updated twice", conflict.Load(), formatRequests(got))
	}
	if *removed != "m1-disk-0-abcde" {
		t.Errorf("removedPersistentVolumeClaims = %q after the conflict", *removed)
	}
	fc.nothingLeft(t)
}

// A finished create's Secret is its VM's: when Remove deletes that VM, the garbage collector takes the Secret and
// Remove does not read it (TestMachineLifeRequests pins that). When the VM went some other way (deleted by hand,
// orphaning its Secret), Remove reads the Secret and deletes it, since the machine's VM owned it.
func TestRemoveLeavesAFinishedCreatesSecretToTheGarbageCollector(t *testing.T) {
	fc, d := createdOnInstantKubeVirt(t)
	if _, secret := fc.machineObjects("m1"); secret == nil || len(secret.OwnerReferences) != 1 {
		t.Fatalf("the create did not hand its Secret to the VM: %+v", secret)
	}
	// Deleted by hand with --cascade=orphan: the VM goes, the Secret stays (the tracker, past the collector).
	for _, resource := range []string{"virtualmachineinstances", "virtualmachines"} {
		if err := fc.KV.Tracker().Delete(kubevirtv1.SchemeGroupVersion.WithResource(resource), "default", "m1"); err != nil {
			t.Fatal(err)
		}
	}
	fc.requests()
	if err := savedAndLoaded(t, fc, d).Remove(); err != nil {
		t.Fatal(err)
	}
	if got := fc.requests(); got["get secrets"] != 1 || got["delete secrets"] != 1 {
		t.Errorf("Remove of a machine whose VM is already gone made %s; want the Secret read and deleted", formatRequests(got))
	}
	fc.nothingLeft(t)
}

// Two rm of one machine at once (two copies of its state): the VM already carries the volumes the other marked,
// and while the other deletes it every update of the VM conflicts. This rm writes nothing more and succeeds.
func TestRemoveBesideAnotherRemove(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, map[string]string{config.AnnotationRemovedPVCs: "m1-disk-0-abcde"})
	updates := 0
	fc.KV.PrependReactor("update", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
		updates++
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "m1", errors.New("the object has been modified"))
	})
	if err := rmDriver(fc, "m1", "").Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if updates != 0 {
		t.Errorf("the VM was updated %d times; its volumes were marked already", updates)
	}
	fc.nothingLeft(t)
}
