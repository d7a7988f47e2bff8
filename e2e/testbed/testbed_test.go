package testbed_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

func running(vm *kubevirtv1.VirtualMachine, ok bool) bool {
	return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusRunning && vm.Status.Ready
}

func newVM(bed *testbed.Bed, name string) *kubevirtv1.VirtualMachine {
	return vmspec.VM("default", name, "default/vm-untag",
		vmspec.Disk{Image: "default/ubuntu-22.04", StorageClass: bed.Seeded.ImageStorageClass["default/ubuntu-22.04"]})
}

// The API server restarts on the same URL with its data; clients made before keep working, and the watches of
// KubeVirt's controller and the stand-in recover: a VM created after the restart still comes up. Then both are
// stopped and started again: they pick up a VM created while they were away. The VMI is KubeVirt's controller's
// work (its generation annotation and revision), not the stand-in's, which counts its API calls.
func TestRestarts(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vms := bed.Virt.KubevirtV1().VirtualMachines("default")
	if _, err := vms.Create(ctx, newVM(bed, "before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, "default", "before", "Running", running); err != nil {
		t.Fatal(err)
	}

	if err := bed.ControlPlane.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	vm, err := vms.Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("VM created before the restart: %v", err)
	}
	if vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusRunning {
		t.Errorf("after the restart the VM is %q, want Running", vm.Status.PrintableStatus)
	}
	if _, err := vms.Create(ctx, newVM(bed, "after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, "default", "after", "Running (stand-in survived the restart)", running); err != nil {
		t.Fatal(err)
	}

	bed.StopStandIn()
	if _, err := vms.Create(ctx, newVM(bed, "while-away"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bed.StartStandIn(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, "default", "while-away", "Running", running); err != nil {
		t.Fatal(err)
	}
	if n := bed.StandIn.Calls()["POST virtualmachineinstances"]; n != 0 {
		t.Errorf("the stand-in created %d VMIs, want none: KubeVirt's controller does (calls: %v)", n, bed.StandIn.Calls())
	}
	if n := bed.StandIn.Calls()["PUT virtualmachineinstances"]; n == 0 {
		t.Errorf("the stand-in never updated a VMI: it plays virt-handler (calls: %v)", bed.StandIn.Calls())
	}
	vmi, err := bed.Virt.KubevirtV1().VirtualMachineInstances("default").Get(ctx, "while-away", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Annotations[kubevirtv1.VirtualMachineGenerationAnnotation] == "" || vmi.Status.VirtualMachineRevisionName == "" {
		t.Errorf("VMI annotations %v, revision %q: want those of KubeVirt's VM controller", vmi.Annotations, vmi.Status.VirtualMachineRevisionName)
	}
}
