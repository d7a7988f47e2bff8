// Command harvester runs Harvester's own VirtualMachine validator and mutator (github.com/harvester/harvester
// pkg/webhook/resources/virtualmachine, NewValidator and NewMutator) for the e2e test bed, so the simulated
// Harvester refuses what a real one refuses and stores VMs as a real one stores them:
//
//	harvester webhook [flags]   serve the validator and the mutator as Harvester's webhook server does, over
//	                            HTTPS; their caches read the cluster of -kubeconfig (see store.go)
//	harvester admit [-mutate] [-cluster FILE]... FILE...
//	                            run the validator (with -mutate: the mutator, then the validator on what it
//	                            makes) on the VirtualMachines in YAML files, without a server, as creates in file
//	                            order against a cluster made of the -cluster files' and the file's other objects;
//	                            one JSON verdict per VirtualMachine on stdout
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "harvester:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: harvester webhook [flags] | admit [-mutate] [-cluster FILE]... FILE...")
	}
	switch args[0] {
	case "webhook":
		return serveWebhook(args[1:], stderr)
	case "admit":
		return admitFiles(args[1:], stdout, stderr)
	default:
		return fmt.Errorf("unknown subcommand %q: want webhook or admit", args[0])
	}
}
