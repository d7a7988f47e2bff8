package standin_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

func TestMain(m *testing.M) { testbed.Main(m, testbed.Options{}) }

// setup returns the shared bed, a fresh namespace and a context bounded for one test.
func setup(t *testing.T) (*testbed.Bed, string, context.Context) {
	t.Helper()
	bed := testbed.Shared(t)
	ns := bed.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return bed, ns, ctx
}

// ubuntu is the seeded ready cloud image as a disk.
func ubuntu(bed *testbed.Bed) vmspec.Disk {
	return vmspec.Disk{Image: "default/ubuntu-22.04", StorageClass: bed.Seeded.ImageStorageClass["default/ubuntu-22.04"]}
}

func create(t *testing.T, ctx context.Context, bed *testbed.Bed, vm *kubevirtv1.VirtualMachine) *kubevirtv1.VirtualMachine {
	t.Helper()
	created, err := bed.Virt.KubevirtV1().VirtualMachines(vm.Namespace).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM %s/%s: %v", vm.Namespace, vm.Name, err)
	}
	return created
}

func printable(s kubevirtv1.VirtualMachinePrintableStatus) func(*kubevirtv1.VirtualMachine, bool) bool {
	return func(vm *kubevirtv1.VirtualMachine, ok bool) bool { return ok && vm.Status.PrintableStatus == s }
}

// hasIP: running, guest agent connected, an address on every NIC.
func hasIP(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
	if !ok || vmi.Status.Phase != kubevirtv1.Running || len(vmi.Status.Interfaces) == 0 {
		return false
	}
	for _, i := range vmi.Status.Interfaces {
		if i.IP == "" {
			return false
		}
	}
	return condition(vmi, kubevirtv1.VirtualMachineInstanceAgentConnected) == corev1.ConditionTrue
}

func condition(vmi *kubevirtv1.VirtualMachineInstance, t kubevirtv1.VirtualMachineInstanceConditionType) corev1.ConditionStatus {
	for _, c := range vmi.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func vmCondition(vm *kubevirtv1.VirtualMachine, t kubevirtv1.VirtualMachineConditionType) (kubevirtv1.VirtualMachineCondition, bool) {
	for _, c := range vm.Status.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return kubevirtv1.VirtualMachineCondition{}, false
}

// A VM shaped like the driver's becomes Running with a guest-agent address: PVC created from the template and
// bound (not owned by the VM), VMI owned by the VM with the template's labels, placed on a node whose
// topology Harvester copied onto it, finalizers of Harvester and KubeVirt on the VM.
func TestVMBecomesRunningWithAddress(t *testing.T) {
	bed, ns, ctx := setup(t)
	vm := create(t, ctx, bed, vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed)))

	vmi, err := bed.WaitVMI(ctx, ns, "vm1", "running with a guest-agent address", hasIP)
	if err != nil {
		t.Fatal(err)
	}
	v4, v6 := standin.Addresses(ns, "vm1", 0)
	nic := vmi.Status.Interfaces[0]
	if nic.Name != "nic-0" || nic.IP != v4 || !slices.Equal(nic.IPs, []string{v4, v6}) || nic.InterfaceName != "eth0" ||
		nic.InfoSource != "domain, guest-agent" || nic.MAC == "" {
		t.Errorf("interface %+v, want nic-0 eth0 %s [%s %s] from domain, guest-agent with a MAC", nic, v4, v4, v6)
	}
	if len(vmi.OwnerReferences) != 1 || vmi.OwnerReferences[0].UID != vm.UID || !*vmi.OwnerReferences[0].Controller {
		t.Errorf("VMI owners %+v, want the VM as controller", vmi.OwnerReferences)
	}
	if vmi.Labels["harvesterhci.io/creator"] != "docker-machine-driver-harvester" {
		t.Errorf("VMI labels %v lack the template's", vmi.Labels)
	}
	node, err := bed.Kube.CoreV1().Nodes().Get(ctx, vmi.Status.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("VMI on node %q: %v", vmi.Status.NodeName, err)
	}
	if z := vmi.Annotations[corev1.LabelTopologyZone]; z == "" || z != node.Labels[corev1.LabelTopologyZone] {
		t.Errorf("VMI zone annotation %q, node %s is in %q", z, node.Name, node.Labels[corev1.LabelTopologyZone])
	}

	got, err := bed.WaitVM(ctx, ns, "vm1", "Running and ready", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusRunning && vm.Status.Ready
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Created {
		t.Error("status.created is false")
	}
	if c, ok := vmCondition(got, kubevirtv1.VirtualMachineReady); !ok || c.Status != corev1.ConditionTrue {
		t.Errorf("VM Ready condition %+v", c)
	}
	for _, f := range []string{"wrangler.cattle.io/VMController.CleanupPVCAndSnapshot", "kubevirt.io/virtualMachineControllerFinalize"} {
		if !slices.Contains(got.Finalizers, f) {
			t.Errorf("VM finalizers %v lack %s", got.Finalizers, f)
		}
	}
	pvc, err := bed.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, vmspec.ClaimName("vm1", 0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Status.Phase != corev1.ClaimBound || len(pvc.OwnerReferences) != 0 || pvc.Annotations["harvesterhci.io/imageId"] != "default/ubuntu-22.04" {
		t.Errorf("PVC phase %s, owners %v, annotations %v: want Bound, no owner, the imageId", pvc.Status.Phase, pvc.OwnerReferences, pvc.Annotations)
	}
}

// runStrategy Halted stops the VM (VMI deleted, printableStatus Stopped); Always starts it again with a new VMI.
func TestHaltedStopsAndAlwaysStarts(t *testing.T) {
	bed, ns, ctx := setup(t)
	create(t, ctx, bed, vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed)))
	first, err := bed.WaitVMI(ctx, ns, "vm1", "running with an address", hasIP)
	if err != nil {
		t.Fatal(err)
	}
	setRunStrategy(t, ctx, bed, ns, "vm1", kubevirtv1.RunStrategyHalted)
	if _, err := bed.WaitVMI(ctx, ns, "vm1", "gone after runStrategy Halted", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, ns, "vm1", "Stopped", printable(kubevirtv1.VirtualMachineStatusStopped)); err != nil {
		t.Fatal(err)
	}
	setRunStrategy(t, ctx, bed, ns, "vm1", kubevirtv1.RunStrategyAlways)
	second, err := bed.WaitVMI(ctx, ns, "vm1", "running again", hasIP)
	if err != nil {
		t.Fatal(err)
	}
	if second.UID == first.UID {
		t.Errorf("restarted VMI has the old UID %s", first.UID)
	}
}

// Deleting the VMI of a RerunOnFailure VM stops the VM: the guest shuts down (Succeeded), and KubeVirt reruns only
// a failed VMI (pkg/virt-controller/watch/vm/vm.go, RunStrategyRerunOnFailure). With runStrategy Always a deleted
// VMI is replaced by a new one (new UID, same address).
func TestDeletedVMI(t *testing.T) {
	bed, ns, ctx := setup(t)
	create(t, ctx, bed, vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed)))
	first, err := bed.WaitVMI(ctx, ns, "vm1", "running with an address", hasIP)
	if err != nil {
		t.Fatal(err)
	}
	vmis := bed.Virt.KubevirtV1().VirtualMachineInstances(ns)
	if err := vmis.Delete(ctx, "vm1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVMI(ctx, ns, "vm1", "gone", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, ns, "vm1", "Stopped", printable(kubevirtv1.VirtualMachineStatusStopped)); err != nil {
		t.Fatal(err)
	}
	setRunStrategy(t, ctx, bed, ns, "vm1", kubevirtv1.RunStrategyAlways)
	second, err := bed.WaitVMI(ctx, ns, "vm1", "started by runStrategy Always", hasIP)
	if err != nil {
		t.Fatal(err)
	}
	if err := vmis.Delete(ctx, "vm1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	third, err := bed.WaitVMI(ctx, ns, "vm1", "a new VMI running", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && vmi.UID != second.UID && hasIP(vmi, ok)
	})
	if err != nil {
		t.Fatal(err)
	}
	if third.Status.Interfaces[0].IP != first.Status.Interfaces[0].IP {
		t.Errorf("address changed across restart: %s -> %s", first.Status.Interfaces[0].IP, third.Status.Interfaces[0].IP)
	}
}

// Deleting the VM with propagationPolicy Foreground (as harvester/remove.go does) removes its VMI and its cloud-init Secret
// (garbage collector) and the PVCs named in removedPersistentVolumeClaims (Harvester); other PVCs stay, and
// removeAllPersistentVolumeClaims alone removes nothing: the driver has to name the claims.
func TestForegroundDeleteCleansUp(t *testing.T) {
	bed, ns, ctx := setup(t)
	vm := create(t, ctx, bed, vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed), ubuntu(bed)))
	if _, err := bed.Kube.CoreV1().Secrets(ns).Create(ctx, vmspec.OwnedSecret(vm), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVMI(ctx, ns, "vm1", "running with an address", hasIP); err != nil {
		t.Fatal(err)
	}
	removed, kept := vmspec.ClaimName("vm1", 0), vmspec.ClaimName("vm1", 1)
	updateVM(t, ctx, bed, ns, "vm1", func(vm *kubevirtv1.VirtualMachine) {
		vm.Annotations["harvesterhci.io/removedPersistentVolumeClaims"] = removed
		vm.Annotations["harvesterhci.io/removeAllPersistentVolumeClaims"] = "true"
	})
	fg := metav1.DeletePropagationForeground
	if err := bed.Virt.KubevirtV1().VirtualMachines(ns).Delete(ctx, "vm1", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, ns, "vm1", "deleted", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVMI(ctx, ns, "vm1", "deleted with its VM", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitPVC(ctx, ns, removed, "deleted (named in removedPersistentVolumeClaims)", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	secrets := bed.Kube.CoreV1().Secrets(ns)
	if _, err := secrets.Get(ctx, "vm1-cloudinit", metav1.GetOptions{}); err == nil {
		t.Error("the VM-owned Secret survived a foreground delete of its VM")
	}
	pvc, err := bed.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, kept, metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp != nil {
		t.Errorf("PVC %s not named for removal should stay: %v", kept, err)
	}
}

// Injected faults show as KubeVirt shows them.
func TestInjectedFaults(t *testing.T) {
	bed, ns, ctx := setup(t)
	cases := []struct {
		inject string
		status kubevirtv1.VirtualMachinePrintableStatus
		check  func(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance)
	}{
		{standin.InjectUnschedulable, kubevirtv1.VirtualMachineStatusUnschedulable, func(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance) {
			// The VM's status lags the VMI's: KubeVirt drops the VMI's PodScheduled condition while the new Pod has
			// none yet, and sets it again once the scheduler has refused the Pod.
			vmi, err := bed.WaitVMI(ctx, vmi.Namespace, vmi.Name, "Scheduling, PodScheduled=False (Unschedulable)", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
				c := findCondition(vmi, "PodScheduled")
				return ok && vmi.Status.Phase == kubevirtv1.Scheduling && c != nil && c.Status == corev1.ConditionFalse && c.Reason == "Unschedulable"
			})
			if err != nil {
				t.Fatal(err)
			}
			schedulerSays(t, ctx, bed, vmi, "0/3 nodes are available: 3 Insufficient memory")
		}},
		{standin.InjectImagePullError, kubevirtv1.VirtualMachineStatusErrImagePull, func(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance) {
			c := findCondition(vmi, kubevirtv1.VirtualMachineInstanceSynchronized)
			if vmi.Status.Phase != kubevirtv1.Scheduling || c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ErrImagePull" {
				t.Errorf("VMI %s: phase %s, Synchronized %+v", vmi.Name, vmi.Status.Phase, c)
			}
		}},
		{standin.InjectCrashLoop, kubevirtv1.VirtualMachineStatusCrashLoopBackOff, nil},
	}
	for _, c := range cases {
		t.Run(c.inject, func(t *testing.T) {
			vm := vmspec.VM(ns, c.inject, "default/vlan100", ubuntu(bed))
			vm.Annotations[standin.AnnotationInject] = c.inject
			create(t, ctx, bed, vm)
			got, err := bed.WaitVM(ctx, ns, vm.Name, string(c.status), printable(c.status))
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				vmi, err := bed.Virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, vmi)
			}
			if c.inject == standin.InjectCrashLoop && (got.Status.StartFailure == nil || got.Status.StartFailure.ConsecutiveFailCount < 1) {
				t.Errorf("crash loop without status.startFailure: %+v", got.Status.StartFailure)
			}
		})
	}
}

// The guest agent never connecting (no-agent) or connecting without an address (no-ip).
func TestNoIP(t *testing.T) {
	bed, ns, ctx := setup(t)
	vm := vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed))
	vm.Annotations[standin.AnnotationInject] = standin.InjectNoIP
	create(t, ctx, bed, vm)
	vmi, err := bed.WaitVMI(ctx, ns, "vm1", "agent connected", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && condition(vmi, kubevirtv1.VirtualMachineInstanceAgentConnected) == corev1.ConditionTrue
	})
	if err != nil {
		t.Fatal(err)
	}
	if nic := vmi.Status.Interfaces[0]; nic.IP != "" || len(nic.IPs) != 0 || nic.InfoSource != "domain, guest-agent" {
		t.Errorf("no-ip: interface %+v, want guest-agent info without addresses", nic)
	}
}

// An image that does not exist: Harvester skips its PVC, the VM waits for it (ErrorPvcNotFound).
func TestMissingImage(t *testing.T) {
	bed, ns, ctx := setup(t)
	create(t, ctx, bed, vmspec.VM(ns, "vm1", "default/vlan100", vmspec.Disk{Image: "default/no-such-image", StorageClass: "longhorn"}))
	if _, err := bed.WaitVM(ctx, ns, "vm1", "ErrorPvcNotFound", printable(kubevirtv1.VirtualMachineStatusPvcNotFound)); err != nil {
		t.Fatal(err)
	}
}

// Required node affinity on the zone label places the VMI in that zone; a zone without nodes is unschedulable
// with kube-scheduler's message.
func TestZoneAffinity(t *testing.T) {
	bed, ns, ctx := setup(t)
	for zone, want := range map[string]kubevirtv1.VirtualMachinePrintableStatus{
		"zone-b": kubevirtv1.VirtualMachineStatusRunning,
		"zone-c": kubevirtv1.VirtualMachineStatusUnschedulable,
	} {
		vm := vmspec.VM(ns, "in-"+zone, "default/vlan100", ubuntu(bed))
		vm.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}},
		}}
		create(t, ctx, bed, vm)
		if _, err := bed.WaitVM(ctx, ns, vm.Name, string(want), printable(want)); err != nil {
			t.Fatal(err)
		}
		vmi, err := bed.Virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want == kubevirtv1.VirtualMachineStatusRunning {
			if vmi.Status.NodeName != "harvester-node-2" || vmi.Annotations[corev1.LabelTopologyZone] != zone {
				t.Errorf("%s: VMI on %q with zone %q, want harvester-node-2 in %s", zone, vmi.Status.NodeName, vmi.Annotations[corev1.LabelTopologyZone], zone)
			}
		} else {
			schedulerSays(t, ctx, bed, vmi, "didn't match Pod's node affinity/selector")
		}
	}
}

// schedulerSays waits until the VMI's virt-launcher Pod is unschedulable with a message that contains want: the
// stand-in's kube-scheduler at work. The VMI's own PodScheduled condition may still give KubeVirt's first reason
// ("PVC … does not exist", from before Harvester made the PVC): KubeVirt keeps it while the Pod stays
// unschedulable (kubevirt/kubevirt pkg/controller/conditions.go AddPodCondition).
func schedulerSays(t *testing.T, ctx context.Context, bed *testbed.Bed, vmi *kubevirtv1.VirtualMachineInstance, want string) {
	t.Helper()
	var last []corev1.PodCondition
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := bed.Kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
			LabelSelector: standin.LauncherLabels(vmi.UID).String()})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}
		pod := pods.Items[0]
		last = pod.Status.Conditions
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				strings.Contains(c.Message, want) {
				return pod.Spec.NodeName == "", nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("VMI %s: its launcher Pod never was unschedulable with %q (conditions %+v): %v", vmi.Name, want, last, err)
	}
}

func findCondition(vmi *kubevirtv1.VirtualMachineInstance, t kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == t {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

func setRunStrategy(t *testing.T, ctx context.Context, bed *testbed.Bed, ns, name string, rs kubevirtv1.VirtualMachineRunStrategy) {
	t.Helper()
	updateVM(t, ctx, bed, ns, name, func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = &rs })
}

// updateVM applies change to the VM, retrying on conflicts (the stand-in writes the VM too).
func updateVM(t *testing.T, ctx context.Context, bed *testbed.Bed, ns, name string, change func(*kubevirtv1.VirtualMachine)) {
	t.Helper()
	api := bed.Virt.KubevirtV1().VirtualMachines(ns)
	err := retry.RetryOnConflict(testbed.ConflictBackoff, func() error {
		vm, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(vm)
		_, err = api.Update(ctx, vm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update VM %s/%s: %v", ns, name, err)
	}
}

// removeInjection takes the stand-in's fault off the VM with a merge patch, which needs no resourceVersion: a VM
// whose guest keeps stopping, or whose start keeps failing, has its status rewritten every moment, and an update
// (get, change, put) lost every one of its 40 tries to those writes.
func removeInjection(t *testing.T, ctx context.Context, bed *testbed.Bed, ns, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + standin.AnnotationInject + `":null}}}`)
	if _, err := bed.Virt.KubevirtV1().VirtualMachines(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove the injected fault from VM %s/%s: %v", ns, name, err)
	}
}

// A guest that shuts itself down: RerunOnFailure leaves the VM Stopped (KubeVirt removes the Succeeded VMI);
// Always starts a new VMI.
func TestGuestShutdown(t *testing.T) {
	bed, ns, ctx := setup(t)
	create(t, ctx, bed, vmspec.VM(ns, "rerun", "default/vlan100", ubuntu(bed)))
	always := vmspec.VM(ns, "always", "default/vlan100", ubuntu(bed))
	always.Spec.RunStrategy = ptr.To(kubevirtv1.RunStrategyAlways)
	create(t, ctx, bed, always)
	first := map[string]*kubevirtv1.VirtualMachineInstance{}
	for _, name := range []string{"rerun", "always"} {
		vmi, err := bed.WaitVMI(ctx, ns, name, "running with an address", hasIP)
		if err != nil {
			t.Fatal(err)
		}
		first[name] = vmi
		updateVM(t, ctx, bed, ns, name, func(vm *kubevirtv1.VirtualMachine) {
			vm.Annotations[standin.AnnotationInject] = standin.InjectGuestShutdown
		})
	}
	if _, err := bed.WaitVM(ctx, ns, "rerun", "Stopped", printable(kubevirtv1.VirtualMachineStatusStopped)); err != nil {
		t.Fatal(err)
	}
	// KubeVirt removes the Succeeded VMI of a RerunOnFailure VM and starts none
	// (pkg/virt-controller/watch/vm/vm.go, RunStrategyRerunOnFailure).
	if _, err := bed.WaitVMI(ctx, ns, "rerun", "gone, not replaced", testbed.Gone); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVM(ctx, ns, "rerun", "Stopped with no VMI", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusStopped && !vm.Status.Created
	}); err != nil {
		t.Fatal(err)
	}
	if n := bed.StandIn.Calls()["POST virtualmachineinstances"]; n != 0 {
		t.Errorf("the stand-in created %d VMIs", n)
	}
	if _, err := bed.WaitVMI(ctx, ns, "always", "replaced by a new VMI", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && vmi.UID != first["always"].UID
	}); err != nil {
		t.Fatal(err)
	}
	// Let the guest of the Always VM stay up now.
	removeInjection(t, ctx, bed, ns, "always")
	if _, err := bed.WaitVMI(ctx, ns, "always", "running again", hasIP); err != nil {
		t.Fatal(err)
	}
}

// A crash loop ends when the fault goes: the next attempt after the back-off runs, and startFailure is cleared.
func TestCrashLoopRecovers(t *testing.T) {
	bed, ns, ctx := setup(t)
	vm := vmspec.VM(ns, "vm1", "default/vlan100", ubuntu(bed))
	vm.Annotations[standin.AnnotationInject] = standin.InjectCrashLoop
	create(t, ctx, bed, vm)
	if _, err := bed.WaitVM(ctx, ns, "vm1", "CrashLoopBackOff", printable(kubevirtv1.VirtualMachineStatusCrashLoopBackOff)); err != nil {
		t.Fatal(err)
	}
	removeInjection(t, ctx, bed, ns, "vm1")
	if _, err := bed.WaitVM(ctx, ns, "vm1", "Running without startFailure", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusRunning && vm.Status.StartFailure == nil
	}); err != nil {
		t.Fatal(err)
	}
}
