package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

func TestMain(m *testing.M) { testbed.Main(m, testbed.Options{}) }

var vmResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}

func newVM(b *testbed.Bed, ns, name string) *kubevirtv1.VirtualMachine {
	return vmspec.VM(ns, name, "default/vm-untag",
		vmspec.Disk{Image: "default/ubuntu-22.04", StorageClass: b.Seeded.ImageStorageClass["default/ubuntu-22.04"]})
}

// inNamespace returns the package's shared bed, a namespace of the test's own in it, and a context that ends a
// minute from now or with the test.
func inNamespace(t *testing.T) (*testbed.Bed, string, context.Context) {
	t.Helper()
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return b, ns, ctx
}

func unstructuredVM(t *testing.T, vm *kubevirtv1.VirtualMachine) *unstructured.Unstructured {
	t.Helper()
	vm.TypeMeta = metav1.TypeMeta{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine"}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(vm)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// A VirtualMachine of the wrong type is refused as on Harvester: mutating webhooks run before the API server
// checks the structural schema, and Harvester's mutator (failure policy Ignore does not cover a denial) refuses
// cpu.cores "two" with its decoder's message; the schema's own message is never reached.
func TestWrongTypeRefusedByHarvesterMutator(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	vm := unstructuredVM(t, newVM(b, ns, "typed-wrong"))
	if err := unstructured.SetNestedField(vm.Object, "two", "spec", "template", "spec", "domain", "cpu", "cores"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Dynamic.Resource(vmResource).Namespace(ns).Create(ctx, vm, metav1.CreateOptions{})
	want := `admission webhook "` + admission.HarvesterMutatorWebhookName + `" denied the request: json: cannot unmarshal string ` +
		`into Go struct field VirtualMachineInstanceTemplateSpec.spec.template.spec.domain.cpu.cores of type uint32`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("create with cpu.cores \"two\": %v\nwant: %s", err, want)
	}
}

// Fields KubeVirt's schema does not know are pruned, not stored: a misspelt field is lost, as on Harvester.
func TestSchemaPrunesUnknownFields(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	vm := unstructuredVM(t, newVM(b, ns, "misspelt"))
	if err := unstructured.SetNestedField(vm.Object, int64(2), "spec", "template", "spec", "domain", "cpu", "coress"); err != nil {
		t.Fatal(err)
	}
	got, err := b.Dynamic.Resource(vmResource).Namespace(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "template", "spec", "domain", "cpu", "coress"); found {
		t.Error("the API server kept spec.template.spec.domain.cpu.coress; KubeVirt's schema prunes it")
	}
	if cores, _, _ := unstructured.NestedInt64(got.Object, "spec", "template", "spec", "domain", "cpu", "cores"); cores != 1 {
		t.Errorf("cpu.cores = %d after create, want 1", cores)
	}
}

// KubeVirt's own admitter refuses, through the webhook, a VirtualMachine whose disk names no volume: on create,
// on update of an accepted VM, and on a server-side dry run.
func TestAdmitterRefusesDiskWithoutVolume(t *testing.T) {
	b, ns, ctx := inNamespace(t)
	vms := b.Virt.KubevirtV1().VirtualMachines(ns)
	orphan := func(vm *kubevirtv1.VirtualMachine) *kubevirtv1.VirtualMachine {
		vm.Spec.Template.Spec.Domain.Devices.Disks = append(vm.Spec.Template.Spec.Domain.Devices.Disks,
			kubevirtv1.Disk{Name: "orphan", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
		return vm
	}
	want := `admission webhook "` + admission.WebhookName + `" denied the request: spec.template.spec.domain.devices.disks[1].Name 'orphan' not found.`

	_, err := vms.Create(ctx, orphan(newVM(b, ns, "orphan-disk")), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create: %v\nwant: %s", err, want)
	}
	_, err = vms.Create(ctx, orphan(newVM(b, ns, "orphan-dry")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("dry-run create: %v\nwant: %s", err, want)
	}

	if _, err := vms.Create(ctx, newVM(b, ns, "accepted"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create of a well-formed VM: %v", err)
	}
	err = retry.RetryOnConflict(testbed.ConflictBackoff, func() error {
		vm, err := vms.Get(ctx, "accepted", metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = vms.Update(ctx, orphan(vm), metav1.UpdateOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("update: %v\nwant: %s", err, want)
	}
}
