package standin

import (
	"strings"
	"time"

	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Test knobs: annotations on a VirtualMachine that change how the stand-in treats it. They may be set at
// creation or added later (e.g. guest-shutdown on a running VM). Set on a Namespace, a knob applies to every VM
// in it that does not set its own: that is how a test reaches VMs the driver creates.
const (
	// AnnotationInject makes something go wrong; the value is a comma-separated list of Inject* values.
	AnnotationInject = "e2e.harvesterhci.io/inject"
	// AnnotationIPDelay overrides Options.IPDelay for this VM: a Go duration such as "30s".
	AnnotationIPDelay = "e2e.harvesterhci.io/ip-delay"
)

// Values of AnnotationInject.
const (
	// InjectUnschedulable keeps the VMI in Scheduling with PodScheduled=False, reason Unschedulable and
	// kube-scheduler's "0/N nodes are available: N Insufficient memory…" message: printableStatus ErrorUnschedulable.
	InjectUnschedulable = "unschedulable"
	// InjectImagePullError keeps the VMI in Scheduling with Synchronized=False, reason ErrImagePull (the
	// virt-launcher image cannot be pulled): printableStatus ErrImagePull.
	InjectImagePullError = "image-pull-error"
	// InjectCrashLoop makes every VMI fail right after it is scheduled; with runStrategy Always or RerunOnFailure
	// KubeVirt's controller records status.startFailure and shows CrashLoopBackOff between attempts (its back-off
	// starts at 10 s).
	InjectCrashLoop = "crash-loop"
	// InjectNoAgent leaves the guest agent unconnected: Running, interfaces without IPs, no AgentConnected.
	InjectNoAgent = "no-agent"
	// InjectNoIP connects the agent (AgentConnected=True) but the guest never gets an address (DHCP failing).
	InjectNoIP = "no-ip"
	// InjectGuestShutdown shuts the guest down from inside once it runs: the VMI goes Succeeded. RerunOnFailure
	// then leaves the VM Stopped, Always starts a new VMI.
	InjectGuestShutdown = "guest-shutdown"
)

// Harvester's names the stand-in honours (harvester/harvester pkg/util/constants.go).
const (
	annotationVolumeClaimTemplates = "harvesterhci.io/volumeClaimTemplates"
	annotationRemovedPVCs          = "harvesterhci.io/removedPersistentVolumeClaims"
	annotationImageID              = "harvesterhci.io/imageId"
	labelCreator                   = "harvesterhci.io/creator"
	creatorNodeDriver              = "docker-machine-driver-harvester"

	// finalizerHarvesterVM is the wrangler finalizer of Harvester's VM OnRemove handler
	// (pkg/controller/master/virtualmachine/register.go: "VMController.CleanupPVCAndSnapshot"), which deletes
	// the PVCs listed in removedPersistentVolumeClaims.
	finalizerHarvesterVM = "wrangler.cattle.io/VMController.CleanupPVCAndSnapshot"
	// finalizerVMI keeps a VMI until its guest has stopped (virt-handler).
	finalizerVMI = kubevirtv1.VirtualMachineInstanceFinalizer
)

// Options tunes the imitated latencies. Zero values take the defaults in brackets.
type Options struct {
	PhaseDelay time.Duration // each step: launcher Pod made → bound → running (VMI Scheduled) → VMI Running [50ms]
	IPDelay    time.Duration // Running → guest agent connected, addresses reported [200ms]
	BindDelay  time.Duration // PVC Pending → Bound [50ms]
	StopDelay  time.Duration // VMI deleted → guest stopped, when its grace period is not 0 [100ms]
	Workers    int           // reconcile workers [4]
	// Logf receives errors and one line per notable action; nil discards them.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.PhaseDelay, 50*time.Millisecond)
	def(&o.IPDelay, 200*time.Millisecond)
	def(&o.BindDelay, 50*time.Millisecond)
	def(&o.StopDelay, 100*time.Millisecond)
	if o.Workers == 0 {
		o.Workers = 4
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// knob returns the VM's annotation key, else its namespace's.
func (s *StandIn) knob(vm *kubevirtv1.VirtualMachine, key string) (string, bool) {
	if v, ok := vm.Annotations[key]; ok {
		return v, true
	}
	if ns, err := s.namespaces.Get(vm.Namespace); err == nil {
		v, ok := ns.Annotations[key]
		return v, ok
	}
	return "", false
}

// injected reports whether vm asks for fault f.
func (s *StandIn) injected(vm *kubevirtv1.VirtualMachine, f string) bool {
	list, _ := s.knob(vm, AnnotationInject)
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == f {
			return true
		}
	}
	return false
}

// ipDelay is the VM's AnnotationIPDelay, or the default.
func (s *StandIn) ipDelay(vm *kubevirtv1.VirtualMachine) time.Duration {
	if v, ok := s.knob(vm, AnnotationIPDelay); ok {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			return d
		}
		s.opts.Logf("standin: vm %s/%s: ignoring %s=%q (not a duration)", vm.Namespace, vm.Name, AnnotationIPDelay, v)
	}
	return s.opts.IPDelay
}
