package standin

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// advanceVMI moves a live VMI one step along Pending → Scheduling → Scheduled → Running → guest agent
// connected, each step after its delay, or holds it where an injected fault or a missing/unbound PVC holds a real
// one. It returns the VMI as written and the delay before the next step is due.
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
	if vmi.Status.Phase == "" || s.opts.VMIController {
		// A new VMI, as KubeVirt's VirtualMachine controller creates it. virt-api's VMI mutator would have added
		// virt-handler's finalizer at creation (pkg/virt-api/webhooks/mutating-webhook/mutators/vmi-mutator.go);
		// the VMI controller then reports it Pending. (KubeVirt's own VMI controller may have done so already.)
		if !slices.Contains(upd.Finalizers, finalizerVMI) {
			upd.Finalizers = append(upd.Finalizers, finalizerVMI)
		}
		if !s.opts.VMIController {
			setPhase(upd, kubevirtv1.Pending)
		}
	}
	switch vmi.Status.Phase {
	case "", kubevirtv1.Pending, kubevirtv1.Scheduling:
		if s.opts.VMIController {
			break // KubeVirt's VMI controller's part: it makes the launcher Pod, which syncPod schedules and runs
		}
		if vmi.Status.Phase == kubevirtv1.Scheduling {
			s.schedule(vm, upd, due)
			break
		}
		// The launcher pod cannot start before its PVCs exist and are bound.
		missing, unbound := s.claimState(vm)
		if missing != "" {
			st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceSynchronized, corev1.ConditionFalse,
				"FailedPvcNotFound", fmt.Sprintf("PVC %s/%s does not exist, waiting for it to appear", vm.Namespace, missing))
			break
		}
		st.Conditions = removeCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceSynchronized)
		if !unbound && due("pending", s.opts.PhaseDelay) {
			setPhase(upd, kubevirtv1.Scheduling)
		}
	case kubevirtv1.Scheduled:
		if !due("scheduled", s.opts.PhaseDelay) {
			break
		}
		if s.opts.VMIController && upd.Labels[labelCreator] == creatorNodeDriver {
			s.copyTopology(upd, upd.Status.NodeName) // KubeVirt's VMI controller placed it
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

// schedule imitates kube-scheduler placing the launcher pod and KubeVirt reporting it: a node that satisfies
// the VMI's nodeSelector and required node affinity, else PodScheduled=False with the scheduler's message; or
// an injected fault. Once scheduled, Harvester copies the node's topology onto VMIs the node driver created.
func (s *StandIn) schedule(vm *kubevirtv1.VirtualMachine, upd *kubevirtv1.VirtualMachineInstance, due func(string, time.Duration) bool) {
	st := &upd.Status
	podScheduled := kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled)
	node, msg := s.pickNode(s.vmiPlacement(upd))
	if s.injected(vm, InjectUnschedulable) {
		node, msg = "", insufficientMemory(s.nodeCount())
	}
	if node == "" {
		st.Conditions = setCondition(st.Conditions, podScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable, msg)
		return
	}
	st.Conditions = removeCondition(st.Conditions, podScheduled)
	if s.injected(vm, InjectImagePullError) {
		// The pod is placed but kubelet cannot pull virt-launcher; KubeVirt reports the container's reason.
		st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceSynchronized, corev1.ConditionFalse,
			"ErrImagePull", `failed to pull and unpack image "registry.suse.com/suse/sles/15.7/virt-launcher:1.6.0": not found`)
		return
	}
	if !due("scheduling", s.opts.PhaseDelay) {
		return
	}
	setPhase(upd, kubevirtv1.Scheduled)
	st.NodeName = node
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	upd.Labels[kubevirtv1.NodeNameLabel] = node
	if upd.Labels[labelCreator] == creatorNodeDriver {
		s.copyTopology(upd, node)
	}
}

// settleVMI handles a VMI being deleted or in a final phase. Being deleted, it is virt-handler shutting the guest
// down: after the grace period (capped at Options.StopDelay; 0 means at once, as does a VMI that is not running)
// the VMI is marked Succeeded. Final, it is the VMI controller (kubevirt/kubevirt
// pkg/virt-controller/watch/vmi/lifecycle.go, case vmi.IsFinal()): with no launcher pod left, virt-handler's
// finalizer goes, and, when no VM owns the VMI any more, the VM controller's too; an owning VM's controller drops
// its own. With Options.VMIController, KubeVirt's own VMI controller does that part.
func (s *StandIn) settleVMI(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (time.Duration, error) {
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
	if s.opts.VMIController {
		// KubeVirt's VMI controller drops the finalizers once the launcher Pod is gone (syncPod ends it).
		if _, err := s.writeVMI(ctx, vmi, upd); err != nil {
			return 0, ignoreNotFound(err)
		}
		if vmi.IsFinal() && vmi.DeletionTimestamp != nil {
			s.forget(vmi.UID)
		}
		return 0, nil
	}
	drop := []string{finalizerVMI}
	if vm == nil || !metav1.IsControlledBy(vmi, vm) {
		drop = append(drop, kubevirtv1.VirtualMachineControllerFinalizer)
	}
	upd.Finalizers = slices.DeleteFunc(upd.Finalizers, func(f string) bool { return slices.Contains(drop, f) })
	if _, err := s.writeVMI(ctx, vmi, upd); err != nil {
		return 0, ignoreNotFound(err)
	}
	if vmi.DeletionTimestamp != nil && len(upd.Finalizers) == 0 {
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
