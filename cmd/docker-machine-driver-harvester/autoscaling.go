package main

import (
	"context"
	"fmt"
	"io"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/autoscale"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// autoscalingSnippet is the machineDeploymentAnnotations a pool of cfg needs to autoscale from zero machines
// (autoscale.Compute on the VM render shows, objects.RenderVM), as YAML to paste under the pool, with the pool
// (nil when not known) and the PCI classes Harvester gave (nil when not read).
func autoscalingSnippet(cfg *config.Config, pool *autoscale.Pool, pciClasses map[string]string) ([]byte, error) {
	vm, err := objects.RenderVM(cfg)
	if err != nil {
		return nil, err
	}
	in := autoscale.InputsFor(cfg, pool, pciClasses)
	return []byte(named(string(autoscale.Compute(vm, in).Snippet(in)))), nil
}

// printCheckAutoscaling writes, after check's lines and a blank line, the annotations of an autoscaling pool of the
// machine: with --cluster for the pool the machine config is in, with its labels and taints. It reads Harvester's
// PCI devices when the machine passes host devices through, to tell its GPUs (harvester.PCIClasses). Flags that do
// not parse print nothing here: the pre-flight has told their problems.
func printCheckAutoscaling(ctx context.Context, in checkInput, stdout, stderr io.Writer) {
	cfg, err := config.ParseConfig(in.machineName, in.opts, objects.Rules...)
	if err != nil {
		return
	}
	classes, err := harvester.PCIClasses(ctx, in.machineName, in.opts)
	if err != nil {
		fmt.Fprintf(stderr, "check: cannot list Harvester's PCI devices, so no passed-through device is counted as a GPU in the autoscaling annotations: %s\n", named(config.Redact(err.Error())))
	}
	out, err := autoscalingSnippet(cfg, in.pool, classes)
	if err != nil {
		return // the pre-flight's admission line has told why the VM cannot be built
	}
	fmt.Fprintln(stdout)
	_, _ = stdout.Write(out)
}
