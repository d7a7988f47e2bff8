// Command kubevirt runs KubeVirt's own code for the e2e test bed, so the simulated Harvester checks
// VirtualMachines as a real one does:
//
//	kubevirt crds                 print the VirtualMachine and VirtualMachineInstance CRDs as virt-operator
//	                              generates them (with their structural schemas), as YAML
//	kubevirt webhook [flags]      serve virt-api's VirtualMachine validating admission over HTTPS
//	kubevirt admit FILE...        run virt-api's VirtualMachine admitter on the VirtualMachines in YAML files,
//	                              without a server; one JSON verdict per VirtualMachine on stdout
//	kubevirt controller [flags]   run virt-controller's VirtualMachine controller against a cluster (controller.go),
//	                              with -vmi its VirtualMachineInstance controller too (vmicontroller.go)
//
// The cluster configuration the admitter sees is Harvester's (see config.go).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubevirt:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: kubevirt crds | webhook [flags] | admit FILE... | controller [flags]")
	}
	switch args[0] {
	case "crds":
		return printCRDs(stdout)
	case "webhook":
		return serveWebhook(args[1:], stderr)
	case "admit":
		return admitFiles(args[1:], stdout)
	case "controller":
		return runController(args[1:], stderr)
	default:
		return fmt.Errorf("unknown subcommand %q: want crds, webhook, admit or controller", args[0])
	}
}
