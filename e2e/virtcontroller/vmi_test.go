package virtcontroller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/e2e/upstream"
	"github.com/harvester/docker-machine-driver-harvester/e2e/virtcontroller"
)

// KubeVirt's own VirtualMachineInstance controller runs in the bed (Options.VMI): the VMI that KubeVirt's VM
// controller makes from a VM gets a virt-launcher Pod rendered by virt-controller's template service (owned by
// the VMI, labelled kubevirt.io=virt-launcher, with its compute container and the VMI's PVC), and the VMI goes to
// phase Scheduling. Nothing plays kube-scheduler or kubelet here, so the Pod stays Pending and the VMI Scheduling.
// While the VM's PVC is missing there is no Pod, and the VMI says why, as KubeVirt says it
// (pkg/virt-controller/watch/vmi/datavolumes.go: FailedPvcNotFound).
func TestVMIControllerMakesLauncherPod(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{NoStandIn: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tool, err := upstream.KubeVirtTool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := virtcontroller.Start(ctx, virtcontroller.Options{Tool: tool, Dir: t.TempDir(), Kubeconfig: bed.KubeconfigPath, VMI: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(c.Logs(60))
		}
		c.Stop()
	})

	ns := bed.Namespace(t)
	vm := vmspec.VM(ns, "launched", "default/vm-untag", vmspec.Disk{Image: "default/ubuntu-22.04",
		StorageClass: bed.Seeded.ImageStorageClass["default/ubuntu-22.04"]})
	vm.Spec.RunStrategy = ptr.To(kubevirtv1.RunStrategyAlways)
	if _, err := bed.Virt.KubevirtV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bed.WaitVMI(ctx, ns, vm.Name, "PodScheduled=False (FailedPvcNotFound) while the PVC is missing",
		func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
			return ok && vmi.Status.Phase == kubevirtv1.Pending && hasCondition(vmi, "PodScheduled", corev1.ConditionFalse, "Unschedulable")
		}); err != nil {
		t.Fatal(err)
	}
	if pods := launcherPods(ctx, t, bed, ns); len(pods) != 0 {
		t.Fatalf("%d virt-launcher Pods while the PVC is missing, want none", len(pods))
	}

	// Harvester's VM controller would make the PVC from the volumeClaimTemplates annotation; nothing runs it here.
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: vmspec.ClaimName(vm.Name, 0), Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
			StorageClassName: ptr.To(bed.Seeded.ImageStorageClass["default/ubuntu-22.04"]),
			VolumeMode:       ptr.To(corev1.PersistentVolumeBlock),
		},
	}
	if _, err := bed.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, err := bed.WaitVMI(ctx, ns, vm.Name, "phase Scheduling", func(vmi *kubevirtv1.VirtualMachineInstance, ok bool) bool {
		return ok && vmi.Status.Phase == kubevirtv1.Scheduling
	})
	if err != nil {
		t.Fatal(err)
	}
	pods := launcherPods(ctx, t, bed, ns)
	if len(pods) != 1 {
		t.Fatalf("%d virt-launcher Pods, want 1", len(pods))
	}
	pod := pods[0]
	owner := metav1.GetControllerOf(&pod)
	if owner == nil || owner.Kind != "VirtualMachineInstance" || owner.Name != vmi.Name || owner.UID != vmi.UID {
		t.Errorf("Pod %s is controlled by %+v, want VMI %s (uid %s)", pod.Name, owner, vmi.Name, vmi.UID)
	}
	if pod.Labels[kubevirtv1.AppLabel] != "virt-launcher" || pod.Labels[kubevirtv1.CreatedByLabel] != string(vmi.UID) {
		t.Errorf("Pod labels %v, want kubevirt.io=virt-launcher and kubevirt.io/created-by=%s", pod.Labels, vmi.UID)
	}
	var compute *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "compute" {
			compute = &pod.Spec.Containers[i]
		}
	}
	if compute == nil {
		t.Fatalf("Pod %s has no compute container: %v", pod.Name, pod.Spec.Containers)
	}
	if compute.Image != "virt-launcher" {
		t.Errorf("compute image %q, want virt-controller's default launcher image virt-launcher", compute.Image)
	}
	if !usesClaim(&pod, pvc.Name) {
		t.Errorf("Pod %s does not mount PVC %s: volumes %v", pod.Name, pvc.Name, pod.Spec.Volumes)
	}
	if pod.Spec.NodeName != "" {
		t.Errorf("Pod %s is on node %q: nothing here schedules Pods", pod.Name, pod.Spec.NodeName)
	}
}

func launcherPods(ctx context.Context, t *testing.T, bed *testbed.Bed, ns string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	// The Pod follows the VMI's phase by a moment: the controller creates it, then writes the phase.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := bed.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.AppLabel + "=virt-launcher"})
		if err != nil {
			return false, err
		}
		pods = list.Items
		return len(pods) > 0, nil
	})
	if err != nil && !wait.Interrupted(err) {
		t.Fatal(err)
	}
	return pods
}

func hasCondition(vmi *kubevirtv1.VirtualMachineInstance, typ kubevirtv1.VirtualMachineInstanceConditionType, status corev1.ConditionStatus, reason string) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == typ && c.Status == status && c.Reason == reason {
			return true
		}
	}
	return false
}

func usesClaim(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}
