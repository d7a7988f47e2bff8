package standin

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// updateVMStatus writes the VM status virt-controller derives from the VM and its VMI: created, ready,
// startFailure, printableStatus and conditions. It writes only when something changed.
func (s *StandIn) updateVMStatus(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance,
	startFailure *kubevirtv1.VirtualMachineStartFailure,
) error {
	upd := vm.DeepCopy()
	st := &upd.Status
	st.Created = vmi != nil
	ready := conditionOf(vmi, kubevirtv1.VirtualMachineInstanceReady)
	st.Ready = vmi != nil && !vmi.IsFinal() && ready != nil && ready.Status == corev1.ConditionTrue
	st.StartFailure = startFailure
	st.PrintableStatus = s.printableStatus(upd, vmi)
	st.Conditions = syncConditions(vm.Status.Conditions, vmi)
	if equality.Semantic.DeepEqual(vm.Status, upd.Status) {
		return nil
	}
	_, err := s.virt.KubevirtV1().VirtualMachines(vm.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return ignoreNotFound(err)
}

// printableStatus follows virt-controller's precedence (pkg/virt-controller/watch/vm/vm.go setPrintableStatus):
// the first matching status wins. Migrating, Paused, Provisioning and DataVolumeError (DataVolumes) do not occur
// here.
func (s *StandIn) printableStatus(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
	final := vmi != nil && vmi.IsFinal()
	startExpected := isStartExpected(vm)
	synced := conditionOf(vmi, kubevirtv1.VirtualMachineInstanceSynchronized)
	syncFailed := func(reason string) bool {
		return synced != nil && synced.Status == corev1.ConditionFalse && synced.Reason == reason
	}
	scheduled := conditionOf(vmi, kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled))
	_, unbound := s.claimState(vm)
	switch {
	case vm.DeletionTimestamp != nil:
		return kubevirtv1.VirtualMachineStatusTerminating
	case vmi != nil && !final && (vmi.DeletionTimestamp != nil || isStopExpected(vm)):
		return kubevirtv1.VirtualMachineStatusStopping
	case vmi != nil && vmi.IsRunning():
		return kubevirtv1.VirtualMachineStatusRunning
	case syncFailed("FailedPvcNotFound"):
		return kubevirtv1.VirtualMachineStatusPvcNotFound
	case scheduled != nil && scheduled.Status == corev1.ConditionFalse && scheduled.Reason == corev1.PodReasonUnschedulable:
		return kubevirtv1.VirtualMachineStatusUnschedulable
	case unbound && (vmi != nil && !final || vmi == nil && startExpected):
		return kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding
	case syncFailed("ErrImagePull"):
		return kubevirtv1.VirtualMachineStatusErrImagePull
	case syncFailed("ImagePullBackOff"):
		return kubevirtv1.VirtualMachineStatusImagePullBackOff
	case vmi == nil && startExpected, vmi != nil && (vmi.IsUnprocessed() || vmi.IsScheduling() || vmi.IsScheduled()):
		return kubevirtv1.VirtualMachineStatusStarting
	case (vmi == nil || final) && !startExpected && crashLooping(vm):
		return kubevirtv1.VirtualMachineStatusCrashLoopBackOff
	case final, vmi == nil && !startExpected:
		return kubevirtv1.VirtualMachineStatusStopped
	}
	return kubevirtv1.VirtualMachineStatusUnknown
}

// isStartExpected: the runStrategy wants a VMI now (a crash-loop back-off postpones that).
func isStartExpected(vm *kubevirtv1.VirtualMachine) bool {
	rs, err := vm.RunStrategy()
	if err != nil {
		return false
	}
	switch rs {
	case kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyRerunOnFailure, kubevirtv1.RunStrategyOnce:
		f := vm.Status.StartFailure
		return f == nil || f.RetryAfterTimestamp == nil || !time.Now().Before(f.RetryAfterTimestamp.Time)
	}
	return false
}

func isStopExpected(vm *kubevirtv1.VirtualMachine) bool {
	rs, err := vm.RunStrategy()
	return err == nil && rs == kubevirtv1.RunStrategyHalted
}

func crashLooping(vm *kubevirtv1.VirtualMachine) bool {
	rs, _ := vm.RunStrategy()
	f := vm.Status.StartFailure
	return f != nil && f.ConsecutiveFailCount > 0 &&
		(rs == kubevirtv1.RunStrategyAlways || rs == kubevirtv1.RunStrategyRerunOnFailure || rs == kubevirtv1.RunStrategyOnce)
}

// vmConditionsNotSynced are VM conditions virt-controller manages itself rather than copying from the VMI.
var vmConditionsNotSynced = map[kubevirtv1.VirtualMachineConditionType]bool{
	kubevirtv1.VirtualMachineReady: true, kubevirtv1.VirtualMachineFailure: true,
	"Initialized": true, kubevirtv1.VirtualMachineRestartRequired: true,
}

// syncConditions mirrors virt-controller's syncConditions: Ready from the VMI's Ready (False, VMINotExists /
// VMIConditionMissing, when it has none), every other VMI condition copied, and VM conditions the VMI no longer
// has dropped. Unchanged conditions keep their timestamps.
func syncConditions(old []kubevirtv1.VirtualMachineCondition, vmi *kubevirtv1.VirtualMachineInstance) []kubevirtv1.VirtualMachineCondition {
	now := metav1.Now()
	var out []kubevirtv1.VirtualMachineCondition
	keep := func(c kubevirtv1.VirtualMachineCondition) {
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message {
				c = o
			}
		}
		out = append(out, c)
	}
	switch ready := conditionOf(vmi, kubevirtv1.VirtualMachineInstanceReady); {
	case vmi == nil:
		keep(kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
			Reason: "VMINotExists", Message: "VMI does not exist", LastProbeTime: now, LastTransitionTime: now})
	case ready == nil:
		keep(kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
			Reason: "VMIConditionMissing", Message: "VMI is missing the Ready condition", LastProbeTime: now, LastTransitionTime: now})
	default:
		keep(kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineReady, Status: ready.Status, Reason: ready.Reason,
			Message: ready.Message, LastProbeTime: ready.LastProbeTime, LastTransitionTime: ready.LastTransitionTime})
	}
	for _, o := range old { // conditions virt-controller owns stay as they are
		if vmConditionsNotSynced[o.Type] && o.Type != kubevirtv1.VirtualMachineReady {
			out = append(out, o)
		}
	}
	if vmi != nil {
		for _, c := range vmi.Status.Conditions {
			t := kubevirtv1.VirtualMachineConditionType(c.Type)
			if vmConditionsNotSynced[t] {
				continue
			}
			keep(kubevirtv1.VirtualMachineCondition{Type: t, Status: c.Status, Reason: c.Reason, Message: c.Message,
				LastProbeTime: c.LastProbeTime, LastTransitionTime: c.LastTransitionTime})
		}
	}
	return out
}
