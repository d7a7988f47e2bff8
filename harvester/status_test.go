package harvester

import (
	"strings"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/state"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

func testVM(status kubevirtv1.VirtualMachinePrintableStatus) *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"},
		Status:     kubevirtv1.VirtualMachineStatus{PrintableStatus: status},
	}
}

func testVMI(phase kubevirtv1.VirtualMachineInstancePhase, ifaces ...kubevirtv1.VirtualMachineInstanceNetworkInterface) *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"},
		Status:     kubevirtv1.VirtualMachineInstanceStatus{Phase: phase, Interfaces: ifaces},
	}
}

var (
	allPrintable = []kubevirtv1.VirtualMachinePrintableStatus{"",
		kubevirtv1.VirtualMachineStatusStopped, kubevirtv1.VirtualMachineStatusProvisioning, kubevirtv1.VirtualMachineStatusStarting,
		kubevirtv1.VirtualMachineStatusRunning, kubevirtv1.VirtualMachineStatusPaused, kubevirtv1.VirtualMachineStatusStopping,
		kubevirtv1.VirtualMachineStatusTerminating, kubevirtv1.VirtualMachineStatusCrashLoopBackOff, kubevirtv1.VirtualMachineStatusMigrating,
		kubevirtv1.VirtualMachineStatusUnknown, kubevirtv1.VirtualMachineStatusUnschedulable, kubevirtv1.VirtualMachineStatusErrImagePull,
		kubevirtv1.VirtualMachineStatusImagePullBackOff, kubevirtv1.VirtualMachineStatusPvcNotFound, kubevirtv1.VirtualMachineStatusDataVolumeError,
		kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding, kubevirtv1.VirtualMachineStatusWaitingForReceiver,
	}
	allPhases = []kubevirtv1.VirtualMachineInstancePhase{"none", "", kubevirtv1.Pending, kubevirtv1.Scheduling, kubevirtv1.Scheduled,
		kubevirtv1.Running, kubevirtv1.Succeeded, kubevirtv1.Failed, kubevirtv1.WaitingForSync, kubevirtv1.Unknown}
)

// wantState is the mapping, written out: a running VMI decides but for Stopping, Terminating and Paused;
// otherwise printableStatus decides where it is specific, and then the VMI.
func wantState(ps kubevirtv1.VirtualMachinePrintableStatus, phase kubevirtv1.VirtualMachineInstancePhase) state.State {
	if phase == "Running" { // a running VMI: KubeVirt's VM status may lag it (see runningVMIState)
		switch ps {
		case "Stopping", "Terminating":
			return state.Stopping
		case "Paused":
			return state.Paused
		}
		return state.Running
	}
	switch ps {
	case "Stopped":
		return state.Stopped
	case "Paused":
		return state.Paused
	case "Stopping", "Terminating":
		return state.Stopping
	case "Provisioning", "Starting", "WaitingForVolumeBinding", "WaitingForReceiver":
		return state.Starting
	case "Migrating":
		return state.Running
	case "CrashLoopBackOff", "ErrorUnschedulable", "ErrImagePull", "ImagePullBackOff", "ErrorPvcNotFound", "DataVolumeError":
		return state.Error
	}
	switch phase {
	case "none":
		return state.Stopped
	case "", "Pending", "Scheduling", "Scheduled":
		return state.Starting
	case "Running":
		return state.Running
	case "Succeeded":
		return state.Stopped
	case "Failed":
		return state.Error
	}
	return state.None
}

func TestMachineStateAllCombinations(t *testing.T) {
	if got := machineState(snapshot{}); got != state.None {
		t.Errorf("no VM: %v", got)
	}
	for _, ps := range allPrintable {
		for _, phase := range allPhases {
			s := snapshot{VM: testVM(ps)}
			if phase != "none" {
				s.VMI = testVMI(phase)
			}
			if got, want := machineState(s), wantState(ps, phase); got != want {
				t.Errorf("printableStatus %q, VMI phase %q: %v, want %v", ps, phase, got, want)
			}
		}
	}
	paused := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusRunning), VMI: testVMI(kubevirtv1.Running)}
	paused.VMI.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue}}
	if got := machineState(paused); got != state.Paused {
		t.Errorf("paused VMI: %v", got)
	}
}

func TestStuckError(t *testing.T) {
	unsched := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusUnschedulable), VMI: testVMI(kubevirtv1.Scheduling)}
	unsched.VMI.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{
		Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient memory.",
	}}
	err, grace := stuckError(unsched, nil)
	if grace != 0 || err == nil || !strings.Contains(err.Error(), "no Harvester host can run the VM (ErrorUnschedulable)") ||
		!strings.Contains(err.Error(), "3 Insufficient memory") || !strings.Contains(err.Error(), "--harvester-memory-size") {
		t.Errorf("unschedulable: %v", err)
	}
	// A device taken on every host: kube-scheduler's reason, worded for the device.
	devices := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusUnschedulable), VMI: testVMI(kubevirtv1.Scheduling)}
	devices.VMI.Spec.Domain.Devices.HostDevices = []kubevirtv1.HostDevice{{Name: "gpu", DeviceName: "nvidia.com/GA102GL_A10"}}
	devices.VMI.Spec.Domain.Devices.GPUs = []kubevirtv1.GPU{{Name: "vgpu", DeviceName: "nvidia.com/NVIDIA_A2-2Q"}}
	devices.VMI.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{
		Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/3 nodes are available: 1 Insufficient nvidia.com/GA102GL_A10, 2 node(s) didn't match Pod's node affinity/selector.",
	}}
	err, grace = stuckError(devices, nil)
	if want := "no Harvester host has a free nvidia.com/GA102GL_A10 for the VM (ErrorUnschedulable): PodScheduled Unschedulable: 0/3 nodes are available: " +
		"1 Insufficient nvidia.com/GA102GL_A10, 2 node(s) didn't match Pod's node affinity/selector. Stop a VM that holds one"; grace != 0 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("device unschedulable: %v\nwant %q", err, want)
	}
	binding := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusUnschedulable), VMI: testVMI(kubevirtv1.Scheduling)}
	binding.VMI.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{
		Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
	}}
	if err, _ := stuckError(binding, nil); err != nil {
		t.Errorf("waiting for a volume to bind is not stuck: %v", err)
	}
	for ps, want := range map[kubevirtv1.VirtualMachinePrintableStatus]time.Duration{
		"ErrImagePull": graceImagePull, "ImagePullBackOff": graceImagePull, "ErrorPvcNotFound": graceVolumes,
		"DataVolumeError": graceVolumes, "CrashLoopBackOff": 0, "Terminating": 0,
	} {
		if err, grace := stuckError(snapshot{VM: testVM(ps)}, nil); err == nil || grace != want {
			t.Errorf("%s: %v after %s, want stuck after %s", ps, err, grace, want)
		}
	}
	for _, ps := range []kubevirtv1.VirtualMachinePrintableStatus{"", "Provisioning", "Starting", "Running", "WaitingForVolumeBinding"} {
		if err, _ := stuckError(snapshot{VM: testVM(ps), VMI: testVMI(kubevirtv1.Scheduling)}, nil); err != nil {
			t.Errorf("%s is reported as stuck: %v", ps, err)
		}
	}
	if err, grace := stuckError(snapshot{VM: testVM(""), VMI: testVMI(kubevirtv1.Failed)}, nil); err == nil || grace != graceFailedVMI || !strings.Contains(err.Error(), "VMI phase Failed") {
		t.Errorf("failed VMI: %v", err)
	}
}

// KubeVirt's ErrorUnschedulable is not always the scheduler's current word (unschedulableError): the VM's status
// lags the VMI's, and the VMI keeps its first PodScheduled=False message, on Harvester usually the VMI
// controller's own "PVC … does not exist".
func TestStuckErrorUnschedulableStale(t *testing.T) {
	podScheduled := kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled)
	unsched := func(phase kubevirtv1.VirtualMachineInstancePhase, message string) snapshot {
		s := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusUnschedulable), VMI: testVMI(phase)}
		if message != "" {
			s.VMI.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: message}}
		}
		return s
	}
	const pvcAwaited = "PVC ns/m1-disk-0-abcde does not exist, waiting for it to appear"
	memory := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient memory."}
	binding := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."}

	// The VM still says ErrorUnschedulable, the VMI has moved on.
	for _, phase := range []kubevirtv1.VirtualMachineInstancePhase{kubevirtv1.Scheduled, kubevirtv1.Running} {
		if err, _ := stuckError(unsched(phase, ""), nil); err != nil {
			t.Errorf("VM status lagging a VMI %s is reported as stuck: %v", phase, err)
		}
	}

	stale := unsched(kubevirtv1.Scheduling, pvcAwaited)
	if !staleScheduling(stale) {
		t.Fatal("a scheduling VMI that still says its PVC does not exist is not seen as stale")
	}
	// A pending VMI whose Synchronized condition is gone: KubeVirt found the PVC and made the Pod.
	if !staleScheduling(unsched(kubevirtv1.Pending, pvcAwaited)) {
		t.Error("a pending VMI printed ErrorUnschedulable for a missing PVC is not seen as stale")
	}
	// While the PVC is missing the VM says ErrorPvcNotFound, whose grace applies; nothing is stale.
	missing := unsched(kubevirtv1.Pending, pvcAwaited)
	missing.VM.Status.PrintableStatus = kubevirtv1.VirtualMachineStatusPvcNotFound
	if staleScheduling(missing) {
		t.Error("ErrorPvcNotFound is seen as a stale ErrorUnschedulable")
	}
	if staleScheduling(unsched(kubevirtv1.Scheduling, memory.Message)) {
		t.Error("the scheduler's own message is seen as stale")
	}

	// The scheduler's first word was about binding, and KubeVirt kept it: the Pod tells whether it still is.
	binding1st := unsched(kubevirtv1.Scheduling, binding.Message)
	if !staleScheduling(binding1st) {
		t.Error("a VMI that still says its PVC is unbound is not seen as stale")
	}
	if err, _ := stuckError(binding1st, nil); err != nil {
		t.Errorf("binding, Pod unread: reported as stuck: %v", err)
	}
	if err, grace := stuckError(binding1st, memory); err == nil || grace != 0 || !strings.Contains(err.Error(), "3 Insufficient memory") {
		t.Errorf("binding first, Pod unschedulable for memory: %v after %s", err, grace)
	}

	// The launcher Pod could not be read: the state counts once it lasts graceVolumes, and says where to look.
	err, grace := stuckError(stale, nil)
	if err == nil || grace != graceVolumes || !strings.Contains(err.Error(), "virt-launcher Pod") || !strings.Contains(err.Error(), "m1-disk-0-abcde") {
		t.Errorf("stale message, Pod unread: %v after %s", err, grace)
	}
	// The Pod's own condition decides.
	err, grace = stuckError(stale, memory)
	if err == nil || grace != 0 || !strings.Contains(err.Error(), "3 Insufficient memory") || strings.Contains(err.Error(), "does not exist") {
		t.Errorf("stale message, Pod unschedulable for memory: %v after %s", err, grace)
	}
	for _, pod := range []*corev1.PodCondition{binding, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodScheduled, Status: corev1.ConditionUnknown}} {
		if err, _ := stuckError(stale, pod); err != nil {
			t.Errorf("stale message, Pod %s %q: reported as stuck: %v", pod.Status, pod.Message, err)
		}
	}
}

func TestNICAddresses(t *testing.T) {
	iface := func(name, ip string, ips ...string) kubevirtv1.VirtualMachineInstanceNetworkInterface {
		return kubevirtv1.VirtualMachineInstanceNetworkInterface{Name: name, IP: ip, IPs: ips}
	}
	tests := []struct {
		name   string
		ifaces []kubevirtv1.VirtualMachineInstanceNetworkInterface
		v4, v6 string
	}{
		{"no interfaces", nil, "", ""},
		{"empty address", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "")}, "", ""},
		{"plain IPv4", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "10.0.0.5")}, "10.0.0.5", ""},
		{"with prefix", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "10.0.0.5/24")}, "10.0.0.5", ""},
		{"link-local only", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "fe80::1", "fe80::1", "169.254.3.4")}, "", ""},
		{"dual stack, IPv6 first", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "2001:db8::5", "2001:db8::5", "fe80::1", "10.0.0.5")}, "10.0.0.5", "2001:db8::5"},
		{"IPv6 only", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "2001:db8::5/64")}, "", "2001:db8::5"},
		// After RKE2 starts, the agent reports cni0, flannel.1, … with no VM NIC name: never picked.
		{"other interfaces first", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("", "10.42.0.1"), iface("nic-1", "192.168.9.9"), iface("nic-0", "10.0.0.5")}, "10.0.0.5", ""},
		{"only other interfaces", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("", "10.42.0.1"), iface("nic-1", "192.168.9.9")}, "", ""},
		{"IPv4-mapped IPv6", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "::ffff:10.0.0.7")}, "10.0.0.7", ""},
		{"garbage", []kubevirtv1.VirtualMachineInstanceNetworkInterface{iface("nic-0", "not-an-ip")}, "", ""},
	}
	for _, tt := range tests {
		v4, v6 := nicAddresses(testVMI(kubevirtv1.Running, tt.ifaces...), config.PrimaryNIC)
		if v4 != tt.v4 || v6 != tt.v6 {
			t.Errorf("%s: got %q %q, want %q %q", tt.name, v4, v6, tt.v4, tt.v6)
		}
	}
	if v4, v6 := nicAddresses(nil, config.PrimaryNIC); v4 != "" || v6 != "" {
		t.Errorf("nil VMI: %q %q", v4, v6)
	}
	if _, _, ok := readyAddresses(snapshot{VM: testVM(""), VMI: testVMI(kubevirtv1.Scheduled, iface("nic-0", "10.0.0.5"))}); ok {
		t.Errorf("a VMI that is not Running is not ready, whatever its interfaces say")
	}
}

func TestDescribe(t *testing.T) {
	s := snapshot{VM: testVM(kubevirtv1.VirtualMachineStatusStarting), VMI: testVMI(kubevirtv1.Running)}
	if got := describe(s); got != "VM Starting, VMI Running, guest agent not connected, nic-0 has no IP" {
		t.Errorf("describe = %q", got)
	}
	if got := describe(snapshot{}); got != "no VirtualMachine" {
		t.Errorf("describe = %q", got)
	}
}
