package testbed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The VMI's way to Scheduled is KubeVirt's own VMI controller's, the stand-in playing
// only kube-scheduler and kubelet for its virt-launcher Pod (and virt-handler after that): a VM reaches Running
// with an address on a Pod that is bound to the VMI's node and running with a pod IP; a VM whose nodeSelector no
// node matches is ErrorUnschedulable with the scheduler's reason and message, copied by KubeVirt onto the VMI; a
// VM whose launcher image cannot be pulled (the kubelet's ErrImagePull on the compute container, injected) is
// ErrImagePull; a running VMI settles (no tug of war over its status); a guest that shuts down ends its Pod and
// VMI; deleting a VM ends its Pod and its VMI.
func TestKubeVirtVMIController(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vms := bed.Virt.KubevirtV1().VirtualMachines("default")
	if _, err := vms.Create(ctx, newVM(bed, "launched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shutdown := newVM(bed, "shutdown")
	shutdown.Annotations[standin.AnnotationInject] = standin.InjectGuestShutdown
	if _, err := vms.Create(ctx, shutdown, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pullFails := newVM(bed, "no-image")
	pullFails.Annotations[standin.AnnotationInject] = standin.InjectImagePullError
	if _, err := vms.Create(ctx, pullFails, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Started once its PVC is bound: KubeVirt keeps the first PodScheduled=False a VMI gets, whatever the Pod says
	// later (pkg/controller/conditions.go AddPodCondition adds a condition only when there is none; lifecycle.go,
	// case vmi.IsScheduling()), and a missing or unbound PVC would give the first one.
	unschedulable := newVM(bed, "nowhere")
	unschedulable.Spec.RunStrategy = ptr.To(kubevirtv1.RunStrategyHalted)
	unschedulable.Spec.Template.Spec.NodeSelector = map[string]string{"example.com/no-such-label": "true"}
	if _, err := vms.Create(ctx, unschedulable, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitPVC(ctx, "default", vmspec.ClaimName("nowhere", 0), "Bound", func(pvc *corev1.PersistentVolumeClaim, ok bool) bool {
		return ok && pvc.Status.Phase == corev1.ClaimBound
	}); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(testbed.ConflictBackoff, func() error {
		vm, err := vms.Get(ctx, "nowhere", metav1.GetOptions{})
		if err != nil {
			return err
		}
		vm.Spec.RunStrategy = ptr.To(kubevirtv1.RunStrategyAlways)
		_, err = vms.Update(ctx, vm, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	if _, err := bed.WaitVM(ctx, "default", "launched", "Running", running); err != nil {
		t.Fatal(err)
	}
	vmi, err := bed.WaitVMI(ctx, "default", "launched", "an address", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && len(vmi.Status.Interfaces) > 0 && vmi.Status.Interfaces[0].IP != ""
	})
	if err != nil {
		t.Fatal(err)
	}
	// Settled: neither KubeVirt's controller nor the stand-in's virt-handler rewrites what the other wrote (the
	// pod interface name KubeVirt gives each NIC, say).
	vmiAPI := bed.Virt.KubevirtV1().VirtualMachineInstances("default")
	time.Sleep(time.Second) // KubeVirt may still add what it derives from the guest's report
	if vmi, err = vmiAPI.Get(ctx, "launched", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if now, err := vmiAPI.Get(ctx, "launched", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if now.ResourceVersion != vmi.ResourceVersion {
		t.Errorf("a running VMI kept changing: resourceVersion %s, 2 s later %s; interfaces %+v, then %+v",
			vmi.ResourceVersion, now.ResourceVersion, vmi.Status.Interfaces, now.Status.Interfaces)
	}
	pod := launcherPod(ctx, t, bed, vmi)
	if pod.Spec.NodeName == "" || pod.Spec.NodeName != vmi.Status.NodeName {
		t.Errorf("Pod on node %q, VMI on %q: KubeVirt takes the VMI's node from its Pod", pod.Spec.NodeName, vmi.Status.NodeName)
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		t.Errorf("Pod phase %s, IP %q: want Running with an IP", pod.Status.Phase, pod.Status.PodIP)
	}
	if n := bed.StandIn.Calls()["POST pods/binding"]; n == 0 {
		t.Errorf("the stand-in never bound a Pod (calls: %v)", bed.StandIn.Calls())
	}

	if _, err := bed.WaitVM(ctx, "default", "nowhere", "ErrorUnschedulable for its node selector", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		if !ok || vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusUnschedulable {
			return false
		}
		c, ok := vmCondition(vm, kubevirtv1.VirtualMachineConditionType(corev1.PodScheduled))
		return ok && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
			strings.HasPrefix(c.Message, "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
	}); err != nil {
		t.Fatal(err)
	}
	unscheduled, err := bed.WaitVMI(ctx, "default", "nowhere", "Scheduling", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && vmi.Status.Phase == kubevirtv1.Scheduling
	})
	if err != nil {
		t.Fatal(err)
	}
	if pod := launcherPod(ctx, t, bed, unscheduled); pod.Spec.NodeName != "" {
		t.Errorf("the unschedulable VM's Pod is on node %q", pod.Spec.NodeName)
	}

	if _, err := bed.WaitVM(ctx, "default", "no-image", "ErrImagePull", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusErrImagePull
	}); err != nil {
		t.Fatal(err)
	}

	// The guest shuts down: the Pod ends with it, KubeVirt removes the Succeeded VMI of a RerunOnFailure VM and
	// starts none.
	if _, err := bed.WaitVM(ctx, "default", "shutdown", "Stopped with no VMI", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusStopped && !vm.Status.Created
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVMI(ctx, "default", "shutdown", "gone", testbed.Gone); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"launched", "nowhere", "no-image", "shutdown"} {
		if err := vms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := bed.WaitVMI(ctx, "default", name, "gone", testbed.Gone); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := bed.Kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.AppLabel + "=virt-launcher"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d virt-launcher Pods left after the VMs are gone", len(pods.Items))
	}
}

// launcherPod returns the VMI's virt-launcher Pod, failing unless there is exactly one, controlled by the VMI.
func launcherPod(ctx context.Context, t *testing.T, bed *testbed.Bed, vmi *kubevirtv1.VirtualMachineInstance) *corev1.Pod {
	t.Helper()
	pods, err := bed.Kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: standin.LauncherLabels(vmi.UID).String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d virt-launcher Pods for VMI %s, want 1", len(pods.Items), vmi.Name)
	}
	pod := &pods.Items[0]
	if !metav1.IsControlledBy(pod, vmi) {
		t.Errorf("Pod %s is not controlled by VMI %s: %v", pod.Name, vmi.Name, pod.OwnerReferences)
	}
	return pod
}

func vmCondition(vm *kubevirtv1.VirtualMachine, t kubevirtv1.VirtualMachineConditionType) (kubevirtv1.VirtualMachineCondition, bool) {
	for _, c := range vm.Status.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return kubevirtv1.VirtualMachineCondition{}, false
}
