package admission_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

var nadResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// harvesterDenied is how the API server words a refusal by Harvester's validator.
func harvesterDenied(msg string) string {
	return `admission webhook "` + admission.HarvesterWebhookName + `" denied the request: ` + msg
}

// Harvester's own validator refuses, through its webhook, a VM whose MAC address another VM already has on the
// same cluster network: it finds the other VM and the networks' cluster network (the
// NetworkAttachmentDefinition's label) in the cluster, on create and on a server-side dry run. The same MAC
// address on a network of another cluster network is accepted.
func TestHarvesterRefusesDuplicateMAC(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	// Harvester's check spans every namespace of the shared bed: the MAC, locally administered and used by no other
	// test, is the namespace's own, so the test can run again (-count) in the same bed.
	sum := fnv.New32a()
	sum.Write([]byte(ns))
	h := sum.Sum32()
	mac := fmt.Sprintf("02:d0:0d:%02x:%02x:%02x", byte(h>>16), byte(h>>8), byte(h))
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)
	withMAC := func(name, network string) *kubevirtv1.VirtualMachine {
		vm := newVM(b, ns, name)
		vm.Spec.Template.Spec.Networks[0].Multus.NetworkName = network
		vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress = mac
		return vm
	}
	if _, err := vms.Create(ctx, withMAC("first", "default/vm-untag"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create of the first VM with MAC %s: %v", mac, err)
	}
	want := harvesterDenied("duplicate mac address present for vm second for cluster network mgmt")
	// The validator reads VMs from an informer, as on Harvester: the first VM may take a moment to reach it. The
	// dry run is refused once it has (a dry run stores nothing, so trying again is harmless).
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err = vms.Create(ctx, withMAC("second", "default/vlan100"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("dry-run create of a second VM with MAC %s on cluster network mgmt: %v\nwant: %s", mac, err, want)
	}
	_, err = vms.Create(ctx, withMAC("second", "default/vlan100"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create of a second VM with MAC %s on cluster network mgmt: %v\nwant: %s", mac, err, want)
	}

	// A VM network of its own, on another cluster network.
	nad := map[string]any{
		"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": "storage", "namespace": ns,
			"labels": map[string]any{"network.harvesterhci.io/clusternetwork": "storage"}},
		"spec": map[string]any{"config": `{"cniVersion":"0.3.1","name":"storage","type":"bridge","bridge":"storage-br"}`},
	}
	if _, err := b.Dynamic.Resource(nadResource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: nad}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vms.Create(ctx, withMAC("third", ns+"/storage"), metav1.CreateOptions{}); err != nil {
		t.Errorf("create of a VM with MAC %s on cluster network storage: %v", mac, err)
	}
}

// Harvester's own validator refuses a VM whose disks (its volumeClaimTemplates annotation) ask for more storage
// than the namespace's quota leaves: Rancher's project quota annotation on the namespace and its default
// ResourceQuota, both read from the cluster. The refusal is Harvester's plain error, answered as an internal
// error.
func TestHarvesterRefusesOverStorageQuota(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	// The same VM fits in 20Gi and not in 5Gi (its one disk asks for 10Gi).
	setQuota := func(limit string) {
		t.Helper()
		patch := `{"metadata":{"annotations":{"field.cattle.io/resourceQuota":"{\"limit\":{\"requestsStorage\":\"` + limit + `\"}}"}}}`
		if _, err := b.Kube.CoreV1().Namespaces().Patch(ctx, ns, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		// Harvester's validator reads the namespace from an informer, as on Harvester.
		if err := b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.Namespaces, "", ns); err != nil {
			t.Fatal(err)
		}
	}
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "default-quota",
			Labels: map[string]string{"resourcequota.management.cattle.io/default-resource-quota": "true"}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("20Gi")}},
	}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)

	setQuota("5Gi")
	want := harvesterDenied("storage insufficient resources due to resource quota")
	_, err := vms.Create(ctx, newVM(b, ns, "too-big"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("dry-run create of a 10Gi VM under a 5Gi quota: %v\nwant: %s", err, want)
	}
	setQuota("20Gi")
	if _, err := vms.Create(ctx, newVM(b, ns, "fits"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry-run create of a 10Gi VM under a 20Gi quota: %v", err)
	}
}

// Harvester's validator judges status updates too (its rule names virtualmachines/status): a volume hotplug
// request for a PVC marked as a golden image (harvester/harvester pkg/util/constants.go AnnotationGoldenImage),
// written to a VM's status, is refused with Harvester's message; it reads the PVC from the cluster.
func TestHarvesterJudgesStatusUpdates(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "golden", Annotations: map[string]string{"harvesterhci.io/goldenImage": "true"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)
	if _, err := vms.Create(ctx, newVM(b, ns, "hotplug"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := harvesterDenied("PVC " + ns + "/golden is a golden image, it can't be used as a hotplug volume in VM")
	err := retry.RetryOnConflict(testbed.ConflictBackoff, func() error { // the stand-in writes the status meanwhile
		vm, err := vms.Get(ctx, "hotplug", metav1.GetOptions{})
		if err != nil {
			return err
		}
		vm.Status.VolumeRequests = append(vm.Status.VolumeRequests, kubevirtv1.VirtualMachineVolumeRequest{
			AddVolumeOptions: &kubevirtv1.AddVolumeOptions{Name: "golden",
				Disk: &kubevirtv1.Disk{DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSCSI}}},
				VolumeSource: &kubevirtv1.HotplugVolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
					PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "golden"}}}},
		})
		_, err = vms.UpdateStatus(ctx, vm, metav1.UpdateOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("status update with a hotplug request for a golden-image PVC: %v\nwant: %s", err, want)
	}
}

// Harvester's validator looks VMs up through indexes (by MAC address, by PVC), kept as Harvester's webhook keeps
// them on its informers (pkg/webhook/indexeres RegisterIndexers): a lookup examines the VMs filed under its key,
// however many VMs the cluster holds. With 30 VMs of the test's own, dry-run creates of a VM with a new MAC
// address examine none of them. The tool once scanned every VM on every lookup, converting each to its type: the
// work of each admission grew with the VMs, and of 200 machines removed at once every removal timed the webhook
// out.
func TestHarvesterIndexLookups(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	const n, tries = 30, 5
	sum := fnv.New32a()
	sum.Write([]byte(ns))
	h := sum.Sum32()
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)
	withMAC := func(name string, i int) *kubevirtv1.VirtualMachine {
		vm := newVM(b, ns, name)
		halted := kubevirtv1.RunStrategyHalted
		vm.Spec.RunStrategy = &halted
		vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress = fmt.Sprintf("02:d1:%02x:%02x:%02x:%02x", byte(h>>16), byte(h>>8), byte(h), byte(i))
		return vm
	}
	for i := range n {
		if _, err := vms.Create(ctx, withMAC(fmt.Sprintf("vm-%d", i), i), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The validator's informer holds them all once it refuses the last one's MAC address (events come in order).
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := vms.Create(ctx, withMAC("probe", n-1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("the validator did not see VM vm-%d with its MAC address: %v", n-1, err)
	}
	type counts struct{ lookups, examined map[string]int64 }
	read := func() counts {
		t.Helper()
		var c counts
		for name, into := range map[string]*map[string]int64{"indexLookups": &c.lookups, "indexExamined": &c.examined} {
			if err := b.HarvesterAdmission.Var(ctx, name, into); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	before := read()
	for i := n; i < n+tries; i++ {
		if _, err := vms.Create(ctx, withMAC("new", i), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry-run create of a VM with a new MAC address: %v", err)
		}
	}
	after := read()
	lookups := after.lookups["virtualmachines"] - before.lookups["virtualmachines"]
	examined := after.examined["virtualmachines"] - before.examined["virtualmachines"]
	// Other admissions meanwhile (KubeVirt's controller and the stand-in writing VMs) look up a VM's own PVCs and
	// find that VM: at most one VM per lookup.
	if lookups < tries {
		t.Fatalf("%d dry-run creates made %d index lookups of VMs: the validator's MAC check no longer looks VMs up by index", tries, lookups)
	}
	if examined > lookups {
		t.Errorf("%d index lookups of VMs examined %d VMs, with %d VMs in the namespace: lookups scan the VMs instead of reading an index", lookups, examined, n)
	} else {
		t.Logf("%d index lookups of VMs examined %d VMs, with %d VMs in the namespace", lookups, examined, n)
	}
}

// Harvester's mutator and validator read what they look at on every VM create from informers, as Harvester's
// webhook does: Settings, the KubeVirt resource, the VM networks' NetworkAttachmentDefinitions, the namespace and
// the storage classes; creating VMs makes the webhook read none of them from the API server. It reads there what
// its informers do not hold — the VMs' PVCs, not made yet — so a VM on an object made an instant before is judged
// as before. Read live, those reads (over 40 per machine) outlasted the tool's bound of 5 s with 200 machines
// created at once, and the mutator and the validator refused up to 14 of the creates.
func TestHarvesterWebhookReads(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	const creates, updates = 3, 3
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)
	// A VM whose PVC exists (the stand-in makes it from the volumeClaimTemplates annotation), for updates: the
	// validator reads the PVC and its storage class on each.
	vm, err := vms.Create(ctx, newVM(b, ns, "with-pvc"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var claim string
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pvcs, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pvcs.Items) == 0 {
			return false, err
		}
		claim = pvcs.Items[0].Name
		return true, nil
	})
	if err != nil {
		t.Fatalf("no PVC for VM %s/%s: %v", ns, vm.Name, err)
	}
	for _, held := range []struct {
		gvr             schema.GroupVersionResource
		namespace, name string
	}{
		{admission.Namespaces, "", ns}, {admission.PVCs, ns, claim}} {
		if err := b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, held.gvr, held.namespace, held.name); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]int64 {
		t.Helper()
		var reads map[string]int64
		if err := b.HarvesterAdmission.Var(ctx, "liveReads", &reads); err != nil {
			t.Fatal(err)
		}
		return reads
	}
	dryRun := []string{metav1.DryRunAll}
	before := read()
	for i := range creates {
		got, err := vms.Create(ctx, newVM(b, ns, fmt.Sprintf("vm-%d", i)), metav1.CreateOptions{DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Template.Spec.Domain.Resources.Requests.Memory().IsZero() {
			t.Fatalf("the dry run was not mutated (no memory request): %+v", got.Spec.Template.Spec.Domain.Resources)
		}
	}
	afterCreates := read()
	for i := range updates {
		err := retry.RetryOnConflict(testbed.ConflictBackoff, func() error {
			cur, err := vms.Get(ctx, vm.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Labels["e2e-update"] = fmt.Sprint(i)
			_, err = vms.Update(ctx, cur, metav1.UpdateOptions{DryRun: dryRun})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	after := read()
	for _, resource := range []string{"settings", "kubevirts", "network-attachment-definitions", "namespaces", "storageclasses"} {
		if n := after[resource] - before[resource]; n != 0 {
			t.Errorf("%d VM creates and %d updates made Harvester's webhook read %s from the API server %d times, want 0 (an informer's)", creates, updates, resource, n)
		}
	}
	if n := after["persistentvolumeclaims"] - afterCreates["persistentvolumeclaims"]; n != 0 {
		t.Errorf("%d updates of a VM whose PVC exists made Harvester's webhook read PVCs from the API server %d times, want 0 (an informer's)", updates, n)
	}
	if n := afterCreates["persistentvolumeclaims"] - before["persistentvolumeclaims"]; n < creates {
		t.Errorf("%d VM creates made Harvester's webhook read their PVCs, not made yet, %d times from the API server, want one each at least", creates, n)
	}
}
