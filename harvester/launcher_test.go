package harvester

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// The launcher Pod's scheduling is read from the Pod KubeVirt made for this VMI (by its created-by label), not
// from another VMI's or a terminating one; no Pod yet is Unknown; a credential that may not list Pods gives nil.
func TestLauncherScheduling(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "vmi-1"}}
	pod := func(name, vmiUID, node string, deleting bool, conds ...corev1.PodCondition) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: vmiUID}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Conditions: conds}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1e9, 0)}
		}
		return p
	}
	memory := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient memory."}
	binding := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."}

	cases := []struct {
		name   string
		pods   []*corev1.Pod
		status corev1.ConditionStatus
		msg    string
	}{
		{"no Pod yet", nil, corev1.ConditionUnknown, ""},
		{"another VMI's Pod only", []*corev1.Pod{pod("virt-launcher-m1-old", "vmi-0", "", false, memory)}, corev1.ConditionUnknown, ""},
		{"not looked at yet", []*corev1.Pod{pod("virt-launcher-m1-a", "vmi-1", "", false)}, corev1.ConditionUnknown, ""},
		{"unschedulable", []*corev1.Pod{pod("virt-launcher-m1-a", "vmi-1", "", false, memory)}, corev1.ConditionFalse, memory.Message},
		{"bound", []*corev1.Pod{pod("virt-launcher-m1-a", "vmi-1", "harvester-node-0", false)}, corev1.ConditionTrue, ""},
		{"a terminating Pod beside the new one", []*corev1.Pod{
			pod("virt-launcher-m1-a", "vmi-1", "", true, memory),
			pod("virt-launcher-m1-b", "vmi-1", "", false, binding),
		}, corev1.ConditionFalse, binding.Message},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			for _, p := range c.pods {
				fc.OK(kube.Create(context.Background(), fc.C, kube.Pods, "ns", p))
			}
			got := launcherScheduling(context.Background(), fc.C, vmi)
			if got == nil || got.Status != c.status || got.Message != c.msg {
				t.Errorf("got %+v, want %s %q", got, c.status, c.msg)
			}
		})
	}
	t.Run("Pods may not be listed", func(t *testing.T) {
		fc := newFakeCluster(t)
		fc.FailOn("list", "pods", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil))
		if got := launcherScheduling(context.Background(), fc.C, vmi); got != nil {
			t.Errorf("got %+v, want nil", got)
		}
	})
}

// staleUnschedulable is KubeVirt on Harvester when the launcher Pod is unschedulable: the VMI, made before
// Harvester made its PVC, keeps its first PodScheduled=False reason, and the VM prints ErrorUnschedulable.
func staleUnschedulable(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
	vmi.Status.Phase = kubevirtv1.Scheduling
	vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{
		Type: "PodScheduled", Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "PVC default/m1-disk-0-abcde does not exist, waiting for it to appear",
	}}
	return kubevirtv1.VirtualMachineStatusUnschedulable
}

// With a stale reason the create goes by the launcher Pod: unschedulable for memory ends it at once with the
// scheduler's reason; waiting for its PVC to bind is no failure.
func TestCreateReadsTheLauncherPodBehindAStaleReason(t *testing.T) {
	launcher := func(t *testing.T, fc *fakeCluster, cond corev1.PodCondition) {
		ctx := context.Background()
		var vmi *kubevirtv1.VirtualMachineInstance
		kubefake.Eventually(t, "the VMI exists", func() bool {
			var err error
			vmi, err = fc.KV.KubevirtV1().VirtualMachineInstances("default").Get(ctx, "m1", metav1.GetOptions{})
			return err == nil
		})
		fc.OK(kube.Create(ctx, fc.C, kube.Pods, "default", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "virt-launcher-m1-abcde",
			Labels: map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: string(vmi.UID)}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond}}}))
	}
	t.Run("unschedulable", func(t *testing.T) {
		fc := newFakeCluster(t)
		fc.kubeVirt(staleUnschedulable)
		kubefake.CaptureLog(t)
		d := newTestDriver(t, fc, "m1", createOptions())
		go launcher(t, fc, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/3 nodes are available: 3 Insufficient memory."})
		start := time.Now()
		err := d.Create()
		if err == nil || !strings.Contains(err.Error(), "no Harvester host can run the VM (ErrorUnschedulable): PodScheduled Unschedulable: 0/3 nodes are available: 3 Insufficient memory") ||
			strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("Create: %v", err)
		}
		if took := time.Since(start); took > time.Minute {
			t.Errorf("took %v", took)
		}
		fc.nothingLeft(t)
	})
	t.Run("volume binding", func(t *testing.T) {
		shortGraces(t, 2*time.Second)
		fc := newFakeCluster(t)
		fc.kubeVirt(staleUnschedulable)
		kubefake.CaptureLog(t)
		d := newTestDriver(t, fc, "m1", createOptions())
		go func() {
			launcher(t, fc, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."})
			time.Sleep(3 * time.Second) // longer than the grace: the stale reason is not counted
			ctx := context.Background()
			vmis := fc.KV.KubevirtV1().VirtualMachineInstances("default")
			vmi, _ := vmis.Get(ctx, "m1", metav1.GetOptions{})
			healthy("10.0.0.5")(nil, vmi)
			fc.OK(vmis.Update(ctx, vmi, metav1.UpdateOptions{}))
		}()
		if err := d.Create(); err != nil {
			t.Fatalf("a launcher Pod waiting for its PVC ended the create: %v", err)
		}
	})
}

// A credential that may not list Pods: the stale state counts once it lasts graceVolumes, and the error says
// where to look instead of giving the stale reason as the cause.
func TestCreateCountsAStaleReasonItCannotCheck(t *testing.T) {
	shortGraces(t, time.Second)
	fc := newFakeCluster(t)
	fc.Dyn.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	fc.kubeVirt(staleUnschedulable)
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	err := d.Create()
	if err == nil || !strings.Contains(err.Error(), "no Harvester host took the VM's virt-launcher Pod (ErrorUnschedulable)") ||
		!strings.Contains(err.Error(), "the Pod's events in Harvester say why") || !strings.Contains(err.Error(), "(for 1s)") {
		t.Fatalf("Create: %v", err)
	}
	fc.nothingLeft(t)
}
