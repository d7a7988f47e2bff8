package main

import (
	"fmt"
	"io"

	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// render runs `docker-machine-driver-harvester render --machine-name NAME [--harvester-… flags]` (under a second
// name, its --<name>-… flags and $<NAME>_… variables): it prints, as
// YAML, the cloud-init Secret and the VirtualMachine a create with these flags would make (objects.Render), and
// on stderr the label each object a VM patch gives the guest needs (objects.ObjectRefs). It never contacts
// a cluster. On stderr too, the machineDeploymentAnnotations a pool of the machine needs to autoscale from zero
// machines (autoscalingSnippet). Invalid flags print the same aggregated problems a create reports, and the exit code is 1; a
// malformed command line prints every problem of it at once (a value an int or bool flag cannot take, an unknown
// flag, a stray argument, no --machine-name), and the exit code is 2.
func render(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	machineName, opts, err := parseMachineArgs(args, lookupEnv, nil)
	if err != nil {
		fmt.Fprintf(stderr, "render: %s\nusage: render --machine-name NAME [%s]\n", named(err.Error()), flagsHint(self))
		return 2
	}
	cfg, machine, err := objects.ParseConfig(machineName, opts)
	if err != nil {
		fmt.Fprintln(stderr, named(err.Error()))
		return 1
	}
	out, err := objects.Render(machine)
	if err != nil {
		fmt.Fprintln(stderr, named(err.Error()))
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// What an autoscaling pool of the machine needs, on stderr: stdout is the objects.
	fmt.Fprintf(stderr, "render: a pool of this node template that autoscales from zero machines needs these machineDeploymentAnnotations (check --cluster adds the pool's labels and taints):\n%s",
		autoscalingSnippet(cfg, machine, nil, nil))
	// What only the cluster can tell: whether an admin allowed the objects the VM patch gives the guest.
	for _, ref := range objects.ObjectRefs(machine.VM) {
		fmt.Fprintf(stderr, "render: the VM patch gives the guest %s: a create refuses it unless an admin who may write it in Harvester allows it (never one a node driver made) with: %s\n",
			ref, ref.AllowCommand(cfg.Namespace))
	}
	return 0
}
