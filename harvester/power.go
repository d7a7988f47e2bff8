package harvester

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// stopTimeout bounds a stop: KubeVirt gives the guest its termination grace period (180 s by default) to shut
// down before it pulls the plug.
const stopTimeout = 10 * time.Minute

// Power is driven through the VM object, the way KubeVirt's own start/stop subresources do it underneath:
// runStrategy Halted stops the VM; RerunOnFailure (this driver's strategy) starts it. KubeVirt records the last
// strategy it applied in status.runStrategy and starts a RerunOnFailure VM only on a change from another
// strategy, so a VM whose guest shut itself down (VMI Succeeded) is started by passing through Halted.

// Start powers the machine on and waits until it runs with an IP.
func (d *Driver) Start() error { return d.id.Err(d.boot(false)) }

// needsHaltBeforeStart reports whether a VM that should run will not be started by KubeVirt without first
// passing through Halted: its strategy is not Halted, yet it has no live VMI.
func needsHaltBeforeStart(s snapshot) bool {
	if s.VM.Spec.RunStrategy != nil && *s.VM.Spec.RunStrategy == kubevirtv1.RunStrategyHalted {
		return false
	}
	return s.VMI == nil || s.VMI.IsFinal()
}

// Every power command first reads the VM and acts only when it is the machine's own (see ownership.go); its
// writes to the VM carry the UID read, so they never land on a VM of the same name made since.

// Stop shuts the machine down gracefully and waits until its VMI is gone.
func (d *Driver) Stop() error {
	return d.id.Err(d.powerOff(func(ctx context.Context, c kube.Interface, s snapshot) error {
		logging.Infof("Stopping VM %s/%s", d.namespace(), d.MachineName)
		return d.halt(ctx, c, s.VM.UID)
	}))
}

// powerOff runs a power-off (off) on the machine's VM, within stopTimeout.
func (d *Driver) powerOff(off func(context.Context, kube.Interface, snapshot) error) error {
	d.created = nil // what the last create or start saw is past
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	s, c, err := d.observeVM(ctx)
	if err != nil {
		return err
	}
	return off(ctx, c, s)
}

// Restart stops the machine and starts it again; it is done when a new VMI runs with an IP.
func (d *Driver) Restart() error { return d.id.Err(d.boot(true)) }

// boot starts the VM — with restart, after halting it — and waits until it runs with an IP.
func (d *Driver) boot(restart bool) error {
	d.created = nil
	timeout := d.createTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+stopTimeout)
	defer cancel()
	s, c, err := d.observeVM(ctx)
	if err != nil {
		return err
	}
	switch _, _, ready := readyAddresses(s); {
	case restart:
		logging.Infof("Restarting VM %s/%s", d.namespace(), d.MachineName)
	case ready:
		return nil
	default:
		logging.Infof("Starting VM %s/%s", d.namespace(), d.MachineName)
	}
	if restart || needsHaltBeforeStart(s) {
		if err := d.halt(ctx, c, s.VM.UID); err != nil {
			return err
		}
	}
	if err := d.setRunStrategy(ctx, c, s.VM.UID, kubevirtv1.RunStrategyRerunOnFailure); err != nil {
		return err
	}
	// After a halt the old VMI is gone (halt waited for it), so the one that becomes ready is new.
	return d.waitUntilReady(ctx, c, timeout)
}

// Kill powers the machine off at once, without a guest shutdown, and waits until its VMI is gone. It asks
// KubeVirt's stop subresource for a zero grace period; where that API is not served it does what virt-api does
// behind it: the VMI's grace period becomes 0, then the VM is halted (and the VMI deleted with no grace).
func (d *Driver) Kill() error { return d.id.Err(d.powerOff(d.kill)) }

func (d *Driver) kill(ctx context.Context, c kube.Interface, s snapshot) error {
	ns, name := d.namespace(), d.MachineName
	logging.Infof("Killing VM %s/%s", ns, name)
	err := c.VirtualMachines(ns).Stop(ctx, name, &kubevirtv1.StopOptions{GracePeriod: ptr.To(int64(0))})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		// Either the VM is gone or this API server does not serve subresources.kubevirt.io; client-go words a
		// 404 for the path just like one for the VM (naming the VM), so the VM itself tells which.
		var gone error
		if s, _, gone = d.observeVM(ctx); gone != nil {
			return gone
		}
	}
	switch {
	case err == nil:
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		logging.Debugf("KubeVirt's stop subresource is not served here (%v); killing through the VM object", err)
		if err := d.killThroughVMObject(ctx, c, s); err != nil {
			return err
		}
	default:
		return c.Explain("stop VM", ns+"/"+name, err)
	}
	return d.waitNoVMI(ctx, c)
}

// killThroughVMObject is Kill where KubeVirt's stop subresource is not served. KubeVirt powers a VMI off within
// spec.terminationGracePeriodSeconds, whatever grace a delete asks for: virt-api's stop handler shortens that
// field first, and so does this, before halting the VM and deleting the VMI with no grace. Each write carries
// the UID of the VM or VMI read in s.
func (d *Driver) killThroughVMObject(ctx context.Context, c kube.Interface, s snapshot) error {
	ns, name := d.namespace(), d.MachineName
	vmis := c.VirtualMachineInstances(ns)
	if s.VMI == nil {
		return d.setRunStrategy(ctx, c, s.VM.UID, kubevirtv1.RunStrategyHalted)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": s.VMI.UID}, "spec": map[string]any{"terminationGracePeriodSeconds": 0}})
	if _, err := vmis.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !kube.IsGone(err, "virtualmachineinstances", name) {
		return c.Explain("set a zero grace period on VMI", ns+"/"+name, err)
	}
	if err := d.setRunStrategy(ctx, c, s.VM.UID, kubevirtv1.RunStrategyHalted); err != nil {
		return err
	}
	err := vmis.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)), Preconditions: &metav1.Preconditions{UID: &s.VMI.UID}})
	if err != nil && !kube.IsGone(err, "virtualmachineinstances", name) && !apierrors.IsConflict(err) { // a conflict: that VMI is gone
		return c.Explain("delete VMI", ns+"/"+name, err)
	}
	return nil
}

// halt sets runStrategy Halted on the VM of uid and waits until the VMI is gone.
func (d *Driver) halt(ctx context.Context, c kube.Interface, uid types.UID) error {
	if err := d.setRunStrategy(ctx, c, uid, kubevirtv1.RunStrategyHalted); err != nil {
		return err
	}
	return d.waitNoVMI(ctx, c)
}

// setRunStrategy sets the runStrategy of the VM of uid. spec.running is cleared: KubeVirt rejects a VM with
// both, and VMs made by old driver versions may still carry it. The patch carries the UID, which the API server
// refuses to change: on a VM of the same name made since, it fails.
func (d *Driver) setRunStrategy(ctx context.Context, c kube.Interface, uid types.UID, rs kubevirtv1.VirtualMachineRunStrategy) error {
	ns, name := d.namespace(), d.MachineName
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid}, "spec": map[string]any{"running": nil, "runStrategy": rs}})
	_, err := c.VirtualMachines(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case err == nil:
		logging.Debugf("VM %s/%s: runStrategy %s", ns, name, rs)
		return nil
	case kube.IsGone(err, "virtualmachines", name):
		return d.errNoVM()
	}
	return c.Explain("set runStrategy "+string(rs)+" on VM", ns+"/"+name, err)
}

// waitNoVMI waits, by watch, until the VM has no VMI.
func (d *Driver) waitNoVMI(ctx context.Context, c kube.Interface) error {
	ns, name := d.namespace(), d.MachineName
	last, err := waitFor(ctx, c, ns, name, 0, func(s snapshot) (bool, error) { return s.VMI == nil, nil })
	if err != nil {
		return fmt.Errorf("waiting for VM %s/%s to stop: %w; last seen: %s", ns, name, err, describe(last))
	}
	logging.Infof("VM %s/%s is stopped", ns, name)
	return nil
}

// observeVM is observe for operations on an existing machine: a missing VM is an error.
func (d *Driver) observeVM(ctx context.Context) (snapshot, kube.Interface, error) {
	s, c, err := d.observe(ctx)
	if err == nil && s.VM == nil {
		err = d.errNoVM()
	}
	return s, c, err
}

// errNoVM says the VM does not exist, in the words rancher-machine treats as "gone".
func (d *Driver) errNoVM() error {
	return fmt.Errorf("VirtualMachine %s/%s not found in Harvester", d.namespace(), d.MachineName)
}

// createTimeout is the flag's value during a create, the default in later commands (it is not saved).
func (d *Driver) createTimeout() time.Duration {
	if d.cfg != nil {
		return d.cfg.CreateTimeout
	}
	return config.DefaultCreateTimeoutSecs * time.Second
}
