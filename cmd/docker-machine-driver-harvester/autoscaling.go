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
// (autoscale.Compute on machine's VM, as objects.ParseConfig built it), as YAML to paste under the pool, with the
// pool (nil when not known) and the PCI classes Harvester gave (nil when not read).
func autoscalingSnippet(cfg *config.Config, machine *objects.Machine, pool *autoscale.Pool, pciClasses map[string]string) []byte {
	in := autoscale.InputsFor(cfg, pool, pciClasses)
	return []byte(named(string(autoscale.Compute(machine.VM, in).Snippet(in))))
}

// printCheckAutoscaling writes, after check's lines and a blank line, the annotations of an autoscaling pool of the
// machine: with --cluster for the pool the machine config is in, with its labels and taints. It reads Harvester's
// PCI devices when the machine passes host devices through, to tell its GPUs (harvester.PCIClasses). Flags that do
// not parse print nothing here: the pre-flight has told their problems.
func printCheckAutoscaling(ctx context.Context, in checkInput, stdout, stderr io.Writer) {
	cfg, machine, err := objects.ParseConfig(in.machineName, in.opts)
	if err != nil {
		return
	}
	classes, err := harvester.PCIClasses(ctx, in.machineName, in.opts)
	if err != nil {
		fmt.Fprintf(stderr, "check: cannot list Harvester's PCI devices, so no passed-through device is counted as a GPU in the autoscaling annotations: %s\n", named(config.Redact(err.Error())))
	}
	fmt.Fprintln(stdout)
	_, _ = stdout.Write(autoscalingSnippet(cfg, machine, in.pool, classes))
}
