package standin

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// advanceVMI is virt-handler for a live VMI: it moves it Scheduled → Running → guest agent connected, each step
// after its delay, or holds it where an injected fault holds a real one. Up to Scheduled the VMI is KubeVirt's
// own VMI controller's (it makes the launcher Pod that syncPod schedules and runs). It returns the VMI as written
// and the delay before the next step is due.
func (s *StandIn) advanceVMI(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, time.Duration, error) {
	upd := vmi.DeepCopy()
	st := &upd.Status
	after := time.Duration(0)
	due := func(stage string, delay time.Duration) bool {
		if wait := delay - s.elapsed(vmi.UID, stage); wait > 0 {
			after = wait
			return false
		}
		return true
	}
	// virt-api's VMI mutator adds virt-handler's finalizer at creation (pkg/virt-api/webhooks/mutating-webhook/
	// mutators/vmi-mutator.go); that webhook does not run here, so the stand-in adds it on first sight.
	if !slices.Contains(upd.Finalizers, finalizerVMI) {
		upd.Finalizers = append(upd.Finalizers, finalizerVMI)
	}
	switch vmi.Status.Phase {
	case kubevirtv1.Scheduled:
		if !due("scheduled", s.opts.PhaseDelay) {
			break
		}
		if upd.Labels[labelCreator] == creatorNodeDriver {
			s.copyTopology(upd, upd.Status.NodeName) // Harvester's VMI controller, once KubeVirt's placed it
		}
		if s.injected(vm, InjectCrashLoop) {
			setPhase(upd, kubevirtv1.Failed)
			st.Reason = "CrashLoop"
			break
		}
		if s.wantsRealGuest(vm) {
			s.bootGuest(ctx, upd)
			after = agentPollWhileAbsent
			break
		}
		setPhase(upd, kubevirtv1.Running)
		st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, "", "")
		st.Interfaces = interfaces(upd, false, false)
	case kubevirtv1.Running:
		if s.wantsRealGuest(vm) {
			after = s.observeGuest(ctx, upd)
			break
		}
		if s.injected(vm, InjectGuestShutdown) {
			setPhase(upd, kubevirtv1.Succeeded)
			st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, "PodCompleted", "")
			st.Conditions = removeCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected)
			st.Interfaces = nil
			break
		}
		// The guest boots and cloud-init starts qemu-guest-agent: only then do bridge NICs report addresses.
		if s.injected(vm, InjectNoAgent) || !due("running", s.ipDelay(vm)) {
			break
		}
		withIP := !s.injected(vm, InjectNoIP)
		ifaces := interfaces(upd, true, withIP)
		if withIP {
			s.overlayAddresses(upd, ifaces) // Kube-OVN's DHCP answer, before what the guest's own network data sets
			if err := s.staticAddresses(ctx, upd, ifaces); err != nil {
				return vmi, 0, err
			}
		}
		st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", "")
		st.Interfaces = ifaces
	}
	out, err := s.writeVMI(ctx, vmi, upd)
	return out, after, err
}

// settleVMI handles a VMI being deleted or in a final phase. Being deleted, it is virt-handler shutting the guest
// down: after the grace period (capped at Options.StopDelay; 0 means at once, as does a VMI that is not running)
// the VMI is marked Succeeded. KubeVirt's VMI controller then drops the VMI's finalizers once its launcher Pod
// is gone (pkg/virt-controller/watch/vmi/lifecycle.go, case vmi.IsFinal(); syncPod ends the Pod).
func (s *StandIn) settleVMI(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (time.Duration, error) {
	upd := vmi.DeepCopy()
	grace := kubevirtv1.DefaultGracePeriodSeconds
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	// A final VMI's real guest, if any, has stopped or is stopped now; either way its files are released.
	if !s.stopRealGuest(vmi, time.Duration(grace)*time.Second) {
		return 500 * time.Millisecond, nil
	}
	if !vmi.IsFinal() {
		delay := s.opts.StopDelay
		if grace == 0 || !vmi.IsRunning() || vmi.Annotations[AnnotationGuestSSH] != "" {
			delay = 0 // a real guest has just stopped for real
		}
		if wait := delay - s.elapsed(vmi.UID, "deleting"); wait > 0 {
			return wait, nil
		}
		setPhase(upd, kubevirtv1.Succeeded)
	}
	if _, err := s.writeVMI(ctx, vmi, upd); err != nil {
		return 0, ignoreNotFound(err)
	}
	if vmi.IsFinal() && vmi.DeletionTimestamp != nil {
		s.forget(vmi.UID)
	}
	return 0, nil
}

// writeVMI updates the VMI when upd differs from old. VirtualMachineInstance has no status subresource: status
// is written with the object, as virt-controller and virt-handler do.
func (s *StandIn) writeVMI(ctx context.Context, old, upd *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
	if equality.Semantic.DeepEqual(old, upd) {
		return old, nil
	}
	return s.virt.KubevirtV1().VirtualMachineInstances(old.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
}

func setPhase(vmi *kubevirtv1.VirtualMachineInstance, phase kubevirtv1.VirtualMachineInstancePhase) {
	vmi.Status.Phase = phase
	vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps,
		kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: metav1.Now()})
}

// setCondition sets a condition, keeping its transition time when only reason or message change, and leaving the
// list untouched when nothing changes.
func setCondition(conds []kubevirtv1.VirtualMachineInstanceCondition, typ kubevirtv1.VirtualMachineInstanceConditionType,
	status corev1.ConditionStatus, reason, msg string,
) []kubevirtv1.VirtualMachineInstanceCondition {
	now := metav1.Now()
	c := kubevirtv1.VirtualMachineInstanceCondition{Type: typ, Status: status, Reason: reason, Message: msg,
		LastProbeTime: now, LastTransitionTime: now}
	for i, old := range conds {
		if old.Type != typ {
			continue
		}
		if old.Status == status && old.Reason == reason && old.Message == msg {
			return conds
		}
		if old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out := slices.Clone(conds)
		out[i] = c
		return out
	}
	return append(slices.Clone(conds), c)
}

func removeCondition(conds []kubevirtv1.VirtualMachineInstanceCondition, typ kubevirtv1.VirtualMachineInstanceConditionType) []kubevirtv1.VirtualMachineInstanceCondition {
	if !slices.ContainsFunc(conds, func(c kubevirtv1.VirtualMachineInstanceCondition) bool { return c.Type == typ }) {
		return conds
	}
	return slices.DeleteFunc(slices.Clone(conds), func(c kubevirtv1.VirtualMachineInstanceCondition) bool { return c.Type == typ })
}

func conditionOf(vmi *kubevirtv1.VirtualMachineInstance, typ kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	if vmi == nil {
		return nil
	}
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == typ {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}
