package main

import (
	"fmt"
	"io"

	"github.com/harvester/docker-machine-driver-harvester/harvester/autoscale"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// autoscalingSnippet is the machineDeploymentAnnotations a pool of cfg needs to autoscale from zero machines
// (autoscale.Compute on machine's VM, as objects.ParseConfig built it), as YAML to paste under the pool, with the
// pool (nil when not known) and the PCI classes Harvester gave (nil when not read).
func autoscalingSnippet(cfg *config.Config, machine *objects.Machine, pool *autoscale.Pool, pciClasses map[string]string) []byte {
	in := autoscale.InputsFor(cfg, pool, pciClasses)
	return []byte(named(string(autoscale.Compute(machine.VM, in).Snippet(in))))
}

// printCheckAutoscaling writes, after check's lines and a blank line, the annotations of an autoscaling pool of the
// machine the pre-flight judged (its draft when the pre-flight could not complete it): with --cluster for the pool
// the machine config is in (pool, nil without), with its labels and taints. Its GPUs among the host devices are
// told by the PCI classes the pre-flight's host devices check listed.
func printCheckAutoscaling(result preflight.Result, pool *autoscale.Pool, stdout io.Writer) {
	machine := result.Machine
	if machine == nil {
		machine = result.Draft
	}
	if machine == nil {
		return
	}
	fmt.Fprintln(stdout)
	_, _ = stdout.Write(autoscalingSnippet(machine.Config(), machine, pool, result.PCIClasses))
}
