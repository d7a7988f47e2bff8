package harvester

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/state"
	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// snapshot is what is known of a machine at one moment: its VM and VMI, nil when absent. Every question the
// lifecycle asks (state, readiness, addresses, why it is stuck) is answered from one snapshot.
type snapshot kube.Machine

func (s snapshot) printableStatus() kubevirtv1.VirtualMachinePrintableStatus {
	if s.VM == nil {
		return ""
	}
	return s.VM.Status.PrintableStatus
}

func (s snapshot) vmiPhase() kubevirtv1.VirtualMachineInstancePhase {
	if s.VMI == nil {
		return ""
	}
	return s.VMI.Status.Phase
}

// machineState maps a snapshot to rancher-machine's states. The VM's printableStatus (KubeVirt's own summary)
// decides where it is specific; otherwise the VMI phase does, as in the reference driver.
func machineState(s snapshot) state.State {
	if s.VM == nil {
		return state.None
	}
	if st, ok := runningVMIState(s); ok {
		return st
	}
	switch s.printableStatus() {
	case kubevirtv1.VirtualMachineStatusStopped:
		return state.Stopped
	case kubevirtv1.VirtualMachineStatusPaused:
		return state.Paused
	case kubevirtv1.VirtualMachineStatusStopping, kubevirtv1.VirtualMachineStatusTerminating:
		return state.Stopping
	case kubevirtv1.VirtualMachineStatusProvisioning, kubevirtv1.VirtualMachineStatusStarting,
		kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding, kubevirtv1.VirtualMachineStatusWaitingForReceiver:
		return state.Starting
	case kubevirtv1.VirtualMachineStatusMigrating:
		return state.Running
	case kubevirtv1.VirtualMachineStatusCrashLoopBackOff, kubevirtv1.VirtualMachineStatusUnschedulable,
		kubevirtv1.VirtualMachineStatusErrImagePull, kubevirtv1.VirtualMachineStatusImagePullBackOff,
		kubevirtv1.VirtualMachineStatusPvcNotFound, kubevirtv1.VirtualMachineStatusDataVolumeError:
		return state.Error
	}
	// Running, Unknown, or not reported yet: the VMI tells.
	if s.VMI == nil {
		return state.Stopped
	}
	switch s.vmiPhase() {
	case kubevirtv1.Running:
		return runningOrPaused(s.VMI)
	case "", kubevirtv1.Pending, kubevirtv1.Scheduling, kubevirtv1.Scheduled:
		return state.Starting
	case kubevirtv1.Succeeded:
		return state.Stopped // the guest shut itself down; RerunOnFailure leaves it off
	case kubevirtv1.Failed:
		return state.Error
	}
	return state.None
}

// runningVMIState decides for a VMI that runs and is not being deleted, whatever the VM's printableStatus says,
// unless that is Stopping, Terminating or Paused. KubeVirt writes the VM's status after the VMI's, on the
// VMI's next informer event and again after a conflict (kubevirt/kubevirt pkg/virt-controller/watch/vm/vm.go,
// updateStatus), so right after a start or restart the VMI may run while printableStatus still says Stopped,
// Starting or CrashLoopBackOff; with a running VMI KubeVirt itself prints Running, Paused, Migrating, Stopping or
// Terminating (setPrintableStatus checks those first).
func runningVMIState(s snapshot) (state.State, bool) {
	if s.VMI == nil || s.VMI.DeletionTimestamp != nil || s.vmiPhase() != kubevirtv1.Running {
		return state.None, false
	}
	switch s.printableStatus() {
	case kubevirtv1.VirtualMachineStatusStopping, kubevirtv1.VirtualMachineStatusTerminating:
		return state.Stopping, true
	case kubevirtv1.VirtualMachineStatusPaused:
		return state.Paused, true
	}
	return runningOrPaused(s.VMI), true
}

// runningOrPaused is the state of a running VMI: Paused while its Paused condition is true.
func runningOrPaused(vmi *kubevirtv1.VirtualMachineInstance) state.State {
	if hasCondition(vmi.Status.Conditions, kubevirtv1.VirtualMachineInstancePaused, corev1.ConditionTrue) {
		return state.Paused
	}
	return state.Running
}

// stuckError says why the VM will not become ready by itself, or returns nil while it may still, and for how
// long the state must last before it counts. KubeVirt's error statuses end a create at once — waiting out the
// timeout would only hide the reason (the old driver's "Maximum number of retries (120) exceeded",
// harvester/harvester#1456) — except those that also pass by on a healthy Harvester: a PVC that Harvester
// creates a moment after the VM (ErrorPvcNotFound, DataVolumeError), an image pull the kubelet retries, a VMI
// that failed once and that RerunOnFailure starts again. Those count only once they have lasted their grace.
// launcher is the virt-launcher Pod's PodScheduled condition when the wait read it (staleScheduling), else nil.
func stuckError(s snapshot, launcher *corev1.PodCondition) (err error, grace time.Duration) {
	status := s.printableStatus()
	why := conditionMessages(s)
	switch status {
	case kubevirtv1.VirtualMachineStatusUnschedulable:
		return unschedulableError(s, launcher)
	case kubevirtv1.VirtualMachineStatusErrImagePull, kubevirtv1.VirtualMachineStatusImagePullBackOff:
		return fmt.Errorf("Harvester cannot pull a container image the VM needs (%s)%s. Check the hosts' access to their registry", status, orNothing(why)), graceImagePull
	case kubevirtv1.VirtualMachineStatusPvcNotFound, kubevirtv1.VirtualMachineStatusDataVolumeError:
		return fmt.Errorf("the VM's volumes are broken (%s)%s. Check the image and the storage class of each disk", status, orNothing(why)), graceVolumes
	case kubevirtv1.VirtualMachineStatusCrashLoopBackOff:
		return fmt.Errorf("the VM keeps failing to start (%s)%s", status, orNothing(why)), 0
	case kubevirtv1.VirtualMachineStatusTerminating:
		return fmt.Errorf("the VM is being deleted (%s)", status), 0
	}
	if s.vmiPhase() == kubevirtv1.Failed {
		return fmt.Errorf("the VM failed to start (VMI phase Failed)%s", orNothing(why)), graceFailedVMI
	}
	return nil, 0
}

// How long a state that may pass by must last before it ends a create (see stuckError). Variables for tests.
var (
	graceVolumes   = 30 * time.Second
	graceImagePull = time.Minute
	graceFailedVMI = time.Minute
)

// kubevirtPVCAwaited ends the message KubeVirt's VMI controller gives while a PVC of the VMI does not exist yet
// (kubevirt/kubevirt pkg/virt-controller/watch/vmi/datavolumes.go: "PVC %s/%s does not exist, waiting for it to
// appear"). On Harvester that is the normal start: its VM controller makes the PVCs from the VM's
// volumeClaimTemplates annotation as KubeVirt makes the VMI.
const kubevirtPVCAwaited = "does not exist, waiting for it to appear"

// unschedulableError is stuckError for ErrorUnschedulable. KubeVirt's VM controller prints it from the VMI's
// PodScheduled=False condition, and that condition is not always the scheduler's current word:
//   - the VM's status is written after the VMI's (pkg/virt-controller/watch/vm/vm.go updateStatus), so the VM may
//     still say ErrorUnschedulable after the VMI's launcher Pod was scheduled; the VMI is the one to read;
//   - the VMI keeps the first PodScheduled=False condition it was given and never updates its message while the
//     launcher Pod stays unschedulable (pkg/controller/conditions.go AddPodCondition, called from
//     pkg/virt-controller/watch/vmi/lifecycle.go for a scheduling VMI). On Harvester the first one is usually the
//     VMI controller's own "PVC … does not exist, waiting for it to appear", written before Harvester made the
//     PVC; the Pod that follows waits a moment for the PVC to bind ("unbound immediate PersistentVolumeClaims"),
//     which passes, or is truly unschedulable. Only the Pod tells: the wait reads its condition (launcher). When
//     it cannot, the stale state counts only once it has lasted graceVolumes.
func unschedulableError(s snapshot, launcher *corev1.PodCondition) (error, time.Duration) {
	const status = kubevirtv1.VirtualMachineStatusUnschedulable
	cond := vmiCondition(s.VMI, kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled))
	if cond == nil || cond.Status != corev1.ConditionFalse {
		return nil, 0 // the VM's status lags the VMI's: the launcher Pod was scheduled since
	}
	reason, message := cond.Reason, cond.Message
	switch {
	case launcher != nil && launcher.Status != corev1.ConditionFalse:
		return nil, 0 // scheduled, or not yet looked at by the scheduler
	case launcher != nil:
		reason, message = launcher.Reason, launcher.Message
	case staleScheduling(s) && strings.Contains(message, kubevirtPVCAwaited):
		return fmt.Errorf("no Harvester host took the VM's virt-launcher Pod (%s). KubeVirt still shows its first reason, "+
			"%q, which it keeps while the Pod stays unschedulable for any reason; the Pod's events in Harvester say why "+
			"(CPU, memory, placement rules, devices, volumes)", status, message), graceVolumes
	}
	// The scheduler also says Unschedulable while a volume is still being bound; that passes.
	if strings.Contains(message, schedulerUnboundClaims) {
		return nil, 0
	}
	why := string(corev1.PodScheduled) + " " + strings.Trim(reason+": "+message, ": ")
	if short := devicesShort(s, why); len(short) > 0 {
		return fmt.Errorf("no Harvester host has a free %s for the VM (%s)%s. Stop a VM that holds one, or enable passthrough "+
			"on another device in Harvester (Advanced → PCI Devices, USB Devices or vGPU Devices)", lists.Join(short, "and"), status, orNothing(why)), 0
	}
	return fmt.Errorf("no Harvester host can run the VM (%s)%s. Free CPU or memory on the hosts, ask for less "+
		"(--%s, --%s), or check the placement rules (--%s, zones)", status, orNothing(why), config.FlagCPUCount, config.FlagMemorySize, config.FlagVMAffinity), 0
}

// schedulerUnboundClaims is in kube-scheduler's message while a Pod's PVC is not bound yet (k8s.io/kubernetes
// pkg/scheduler/framework/plugins/volumebinding: "pod has unbound immediate PersistentVolumeClaims").
const schedulerUnboundClaims = "unbound immediate PersistentVolumeClaims"

// staleScheduling reports whether the VM's ErrorUnschedulable rests on a reason about the VM's volumes that may
// no longer hold: KubeVirt's "PVC … does not exist", or the scheduler's "unbound immediate
// PersistentVolumeClaims". KubeVirt keeps either once the volume is there: a scheduling VMI keeps its first
// PodScheduled=False condition (see unschedulableError), and a pending VMI whose last sync found every PVC and
// made the launcher Pod drops only the Synchronized condition, which is what makes the printable status
// ErrorPvcNotFound (pkg/virt-controller/watch/vmi/lifecycle.go, case vmi.IsUnprocessed; the VM controller checks
// ErrorPvcNotFound before ErrorUnschedulable, pkg/virt-controller/watch/vm/vm.go setPrintableStatus). A Pod
// that then fits no host would go unnoticed until the timeout. The launcher Pod's own condition is worth a read.
func staleScheduling(s snapshot) bool {
	cond := vmiCondition(s.VMI, kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled))
	phase := s.vmiPhase()
	return s.printableStatus() == kubevirtv1.VirtualMachineStatusUnschedulable && cond != nil && cond.Status == corev1.ConditionFalse &&
		(strings.Contains(cond.Message, kubevirtPVCAwaited) || strings.Contains(cond.Message, schedulerUnboundClaims)) &&
		(phase == kubevirtv1.Pending || phase == kubevirtv1.Scheduling)
}

func vmiCondition(vmi *kubevirtv1.VirtualMachineInstance, typ kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
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

// readyAddresses returns the primary NIC's addresses once the VMI runs and has one; ok reports readiness.
func readyAddresses(s snapshot) (ipv4, ipv6 string, ok bool) {
	if s.vmiPhase() != kubevirtv1.Running {
		return "", "", false
	}
	ipv4, ipv6 = nicAddresses(s.VMI, config.PrimaryNIC)
	return ipv4, ipv6, ipv4 != "" || ipv6 != ""
}

// nicAddresses returns the first global IPv4 and IPv6 address KubeVirt reports for the named interface. Addresses
// may carry a /prefix; link-local, loopback and unspecified addresses are skipped (a bridge NIC without DHCP shows
// only fe80::). Interfaces the guest agent reports that match no VM NIC have no name and are never used.
func nicAddresses(vmi *kubevirtv1.VirtualMachineInstance, nic string) (ipv4, ipv6 string) {
	if vmi == nil {
		return "", ""
	}
	for _, iface := range vmi.Status.Interfaces {
		if iface.Name != nic {
			continue
		}
		for _, raw := range append([]string{iface.IP}, iface.IPs...) {
			addr, ok := usableAddress(raw)
			switch {
			case !ok:
			case addr.Is4() && ipv4 == "":
				ipv4 = addr.String()
			case addr.Is6() && ipv6 == "":
				ipv6 = addr.String()
			}
		}
	}
	return ipv4, ipv6
}

func usableAddress(raw string) (netip.Addr, bool) {
	raw = strings.TrimSpace(raw)
	if i := strings.IndexByte(raw, '/'); i >= 0 {
		raw = raw[:i]
	}
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, false
	}
	addr = addr.Unmap()
	if addr.IsLinkLocalUnicast() || addr.IsLoopback() || addr.IsUnspecified() || addr.IsMulticast() {
		return netip.Addr{}, false
	}
	return addr, true
}

// describe renders what a snapshot shows, for "timed out … last seen: …" messages.
func describe(s snapshot) string {
	if s.VM == nil {
		return "no VirtualMachine"
	}
	parts := []string{"VM " + orUnknown(string(s.printableStatus()))}
	if s.VMI == nil {
		parts = append(parts, "no VMI")
	} else {
		parts = append(parts, "VMI "+orUnknown(string(s.vmiPhase())))
		if hasCondition(s.VMI.Status.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue) {
			parts = append(parts, "guest agent connected")
		} else {
			parts = append(parts, "guest agent not connected")
		}
		if v4, v6 := nicAddresses(s.VMI, config.PrimaryNIC); v4 != "" || v6 != "" {
			parts = append(parts, fmt.Sprintf("%s has %s", config.PrimaryNIC, strings.TrimSpace(v4+" "+v6)))
		} else {
			parts = append(parts, config.PrimaryNIC+" has no IP")
		}
	}
	if why := conditionMessages(s); why != "" {
		parts = append(parts, why)
	}
	return strings.Join(parts, ", ")
}

// conditionMessages collects the reasons KubeVirt gives on failing conditions of the VM and the VMI.
// devicesShort names the VM's vGPU and host-device resources that kube-scheduler found too few of on every host:
// its message then says "Insufficient <resource>" (NodeResourcesFit, k8s.io/kubernetes
// pkg/scheduler/framework/plugins/noderesources/fit.go), the launcher pod requesting one per device entry.
func devicesShort(s snapshot, why string) []string {
	var devs *kubevirtv1.Devices
	switch {
	case s.VMI != nil:
		devs = &s.VMI.Spec.Domain.Devices
	case s.VM != nil && s.VM.Spec.Template != nil:
		devs = &s.VM.Spec.Template.Spec.Domain.Devices
	default:
		return nil
	}
	var names []string
	for _, g := range devs.GPUs {
		names = append(names, g.DeviceName)
	}
	for _, hd := range devs.HostDevices {
		names = append(names, hd.DeviceName)
	}
	var short []string
	for _, name := range lists.SortedUnique(names) {
		if strings.Contains(why, "Insufficient "+name) {
			short = append(short, name)
		}
	}
	return short
}

func conditionMessages(s snapshot) string {
	var msgs []string
	seen := map[string]bool{}
	add := func(typ, status, reason, message string) {
		// Failure conditions are True; the others report trouble when False.
		bad := (typ == string(kubevirtv1.VirtualMachineFailure) && status == string(corev1.ConditionTrue)) ||
			(status == string(corev1.ConditionFalse) && (reason != "" || message != "") &&
				typ != string(kubevirtv1.VirtualMachineInstanceAgentConnected) && typ != string(kubevirtv1.VirtualMachineInstanceIsMigratable))
		text := strings.TrimSpace(strings.Trim(reason+": "+message, ": "))
		if bad && text != "" && !seen[text] {
			seen[text] = true
			msgs = append(msgs, typ+" "+text)
		}
	}
	if s.VM != nil {
		for _, c := range s.VM.Status.Conditions {
			add(string(c.Type), string(c.Status), c.Reason, c.Message)
		}
	}
	if s.VMI != nil {
		for _, c := range s.VMI.Status.Conditions {
			add(string(c.Type), string(c.Status), c.Reason, c.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

func hasCondition(conds []kubevirtv1.VirtualMachineInstanceCondition, typ kubevirtv1.VirtualMachineInstanceConditionType, status corev1.ConditionStatus) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

func orUnknown(s string) string {
	if s == "" {
		return "(no status yet)"
	}
	return s
}

func orNothing(why string) string {
	if why == "" {
		return ""
	}
	return ": " + strings.TrimSuffix(why, ".") // the sentence goes on; kube-scheduler's messages end in a period
}
