// Package virtcontroller runs KubeVirt's own VirtualMachine controller in the test bed: virt-controller's
// pkg/virt-controller/watch/vm, built from kubevirt.io/kubevirt into the kubevirt tool (hack/tools/kubevirt,
// `kubevirt controller`) and run out of cluster against the bed's API server with Harvester's KubeVirt
// configuration. It creates and deletes VMIs for runStrategy, backs off after failures and writes every VM status
// field the driver waits on (printableStatus, ready, created, conditions, startFailure); the stand-in plays only
// what happens to the VMI after that (package standin). With Options.VMI it runs virt-controller's
// VirtualMachineInstance controller too (pkg/virt-controller/watch/vmi), which makes the virt-launcher Pods.
package virtcontroller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	proc "github.com/harvester/docker-machine-driver-harvester/e2e/internal/process"
)

// Options configures Start.
type Options struct {
	// Tool is the path of the kubevirt tool (upstream.KubeVirtTool).
	Tool string
	// Dir receives the controller's log (kubevirt-controller.log) and its readiness file.
	Dir string
	// Kubeconfig is the admin kubeconfig of the bed.
	Kubeconfig string
	// VMI runs KubeVirt's VirtualMachineInstance controller too (`kubevirt controller -vmi`): it makes each VMI's
	// virt-launcher Pod and moves the VMI to Scheduling, then to Scheduled once the Pod runs with its compute
	// container ready; something must then play kube-scheduler and kubelet for those Pods.
	VMI bool
}

// Controller is a running VirtualMachine controller.
type Controller struct {
	proc    *proc.Process
	logPath string
}

// Start starts the controller and waits until its caches are synced. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Controller, error) {
	if opts.Tool == "" || opts.Dir == "" || opts.Kubeconfig == "" {
		return nil, errors.New("virtcontroller: Tool, Dir and Kubeconfig are required")
	}
	ready := filepath.Join(opts.Dir, "kubevirt-controller.ready")
	_ = os.Remove(ready)
	args := []string{"controller", "-kubeconfig", opts.Kubeconfig, "-ready-file", ready}
	if opts.VMI {
		args = append(args, "-vmi")
	}
	c := &Controller{logPath: filepath.Join(opts.Dir, "kubevirt-controller.log")}
	var err error
	if c.proc, err = proc.Start("kubevirt controller", opts.Tool, args, c.logPath); err != nil {
		return nil, err
	}
	err = c.proc.PollReady(ctx, func(context.Context) error {
		if _, err := os.Stat(ready); err != nil {
			return fmt.Errorf("caches not synced yet: %w", err)
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("start KubeVirt's VirtualMachine controller: %w\n%s", err, c.Logs(30))
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop ends the controller (VMs then keep their state: nothing creates, deletes or reports their VMIs). It is safe
// to call more than once and on nil.
func (c *Controller) Stop() {
	if c != nil && c.proc != nil {
		c.proc.Stop(5 * time.Second)
	}
}

// Logs returns the last n lines of the controller's log, for failure messages.
func (c *Controller) Logs(n int) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s\n", n, c.logPath, proc.TailFile(c.logPath, n))
}

// Exited reports whether the controller has ended, and how; a live bed's controller never does.
func (c *Controller) Exited() (bool, error) {
	if c == nil || c.proc == nil {
		return false, errors.New("no controller")
	}
	return c.proc.Exited()
}
