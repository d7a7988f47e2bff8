package harvester

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// graceRecheck is how often a wait looks at its last snapshot again without an event, so a state that must
// last a while (stuckError's grace), or a launcher Pod that changed under a stale VMI condition
// (launcherScheduling), is noticed when it has.
var graceRecheck = 5 * time.Second

// errVMDeleted is returned when the VM disappears while the driver waits for it.
var errVMDeleted = errors.New("the VirtualMachine was deleted while the driver waited for it")

// errVMReplaced is returned when the VM the create made is gone and another of its name is there.
var errVMReplaced = errors.New("the VirtualMachine was deleted while the driver waited for it, and another VM of its name was made")

// waitUntilReady waits, by watch, until the VM runs and reports an IP on its first NIC, and records the
// addresses. Progress is logged at Info as it changes. A state KubeVirt will not leave by itself ends the wait at
// once with KubeVirt's reason; the timeout ends it with what was awaited and what was last seen.
func (d *Driver) waitUntilReady(ctx context.Context, c kube.Interface, timeout time.Duration) error {
	ns, name := d.namespace(), d.MachineName
	logging.Infof("Waiting for VM %s/%s to run and report an IP (up to %s)", ns, name, timeout)
	var (
		lastLogged string
		seen       bool      // the VM was observed: from then on its absence means it was deleted
		stuck      string    // the stuck state last observed, and since when
		stuckSince time.Time //
	)
	last, err := waitFor(ctx, c, ns, name, graceRecheck, func(s snapshot) (bool, error) {
		if p := progress(s); p != lastLogged {
			logging.Infof("VM %s/%s: %s", ns, name, d.id.Text(p))
			lastLogged = p
		}
		if s.VM == nil {
			if seen {
				return false, errVMDeleted
			}
			return false, nil
		}
		if replaced(s, d.VMUID) {
			return false, errVMReplaced
		}
		seen = true
		var launcher *corev1.PodCondition
		if staleScheduling(s) {
			launcher = launcherScheduling(ctx, c, s.VMI)
		}
		if err, grace := stuckError(s, launcher); err == nil {
			stuck = ""
		} else if grace == 0 {
			return false, err
		} else if stuck != err.Error() {
			stuck, stuckSince = err.Error(), time.Now()
			logging.Debugf("VM %s/%s: %v (ends the create if it lasts %s)", ns, name, err, grace)
		} else if time.Since(stuckSince) >= grace {
			return false, fmt.Errorf("%w (for %s)", err, grace)
		}
		v4, v6, ok := readyAddresses(s)
		if ok {
			d.IPAddress, d.IPv6Address = v4, v6
		}
		return ok, nil
	})
	switch {
	case err == nil:
		logging.Infof("VM %s/%s is running at %s", ns, name, strings.TrimSpace(d.IPAddress+" "+d.IPv6Address))
		d.created = &seenAt{snapshot: last, at: time.Now()}
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out after %s waiting for VM %s/%s to run and report an IP on %s; last seen: %s%s.%s",
			timeout, ns, name, config.PrimaryNIC, describe(last), claimPhases(c, last), timeoutHint(last))
	default:
		return fmt.Errorf("VM %s/%s did not start: %w", ns, name, err)
	}
}

// replaced reports whether the VM of s, or its VMI, is not of the VM whose UID is uid ("": not known yet): the VM
// was deleted and made again under its name (by another create, or by hand), and that one is not ours to wait for.
// The VM and the VMI come from two watches, which need not deliver at once: the VMI of the new VM may arrive while
// the old VM's deletion has not, so the VMI's controller (its VM, which KubeVirt sets: kubevirt.io/kubevirt v1.9.0
// pkg/virt-controller/watch/vm/vm.go, setupVMIFromVM) is checked too.
func replaced(s snapshot, uid string) bool {
	if uid == "" {
		return false
	}
	if s.VM != nil && string(s.VM.UID) != uid {
		return true
	}
	if s.VMI == nil {
		return false
	}
	owner := metav1.GetControllerOf(s.VMI)
	return owner != nil && owner.Kind == "VirtualMachine" && string(owner.UID) != uid
}

// progress is the one-line milestone logged while waiting.
func progress(s snapshot) string {
	switch {
	case s.VM == nil:
		return "gone"
	case s.VMI == nil:
		return orUnknown(string(s.printableStatus()))
	case s.vmiPhase() != kubevirtv1.Running:
		return "VMI " + orUnknown(string(s.vmiPhase()))
	}
	if _, _, ok := readyAddresses(s); ok {
		return "running with an IP"
	}
	if hasCondition(s.VMI.Status.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue) {
		return "running, guest agent connected, waiting for an IP on " + config.PrimaryNIC
	}
	return "running, waiting for the guest agent to report an IP on " + config.PrimaryNIC
}

// timeoutHint says what to check when the wait timed out in a recognisable place.
func timeoutHint(s snapshot) string {
	switch {
	case s.VM == nil || s.VMI == nil:
		return " Check the VM's events in Harvester (volumes being prepared, host resources)."
	case s.vmiPhase() != kubevirtv1.Running:
		return " Check the VM's events in Harvester (scheduling, volumes, image download)."
	case !hasCondition(s.VMI.Status.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue):
		return fmt.Sprintf(" A bridge NIC's IP is only known through qemu-guest-agent, which never connected: make sure the image has it "+
			"(cloud-init installs and enables it unless --%s is set, which needs a package mirror the guest can reach) and that the guest got a DHCP lease.", config.FlagSkipGuestAgent)
	default:
		return " The guest agent is connected but reports no address on " + config.PrimaryNIC + ": check DHCP on its network or --" + config.FlagNetworkData + "."
	}
}

// claimPhases reports the phase of each of the VM's claims, read at the moment of a timeout.
func claimPhases(c kube.Interface, s snapshot) string {
	if s.VM == nil || s.VM.Spec.Template == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var parts []string
	for _, v := range s.VM.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		pvc, err := kube.Get(ctx, c, kube.Claims, s.VM.Namespace, name)
		switch {
		case err == nil:
			parts = append(parts, fmt.Sprintf("PVC %s %s", name, pvc.Status.Phase))
		case kube.IsGone(err, "persistentvolumeclaims", name):
			parts = append(parts, fmt.Sprintf("PVC %s not created yet", name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
