// Command docker-machine-driver-harvester is the Harvester node driver: a rancher/machine plugin that
// rancher-machine (and Rancher) start to create machines as VMs on Harvester. Run by hand it also offers
// subcommands; see `docker-machine-driver-harvester help`.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rancher/machine/libmachine/drivers/plugin"
	"github.com/rancher/machine/libmachine/drivers/plugin/localbinary"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

func main() {
	setUpProcess()
	// A name Rancher would not carry intact is no driver: refused before anything else, plugin or verb, so that
	// no machine is ever saved under it (harvester/identity ValidName).
	if selfErr != nil {
		fmt.Fprintf(os.Stderr, "%v\n", selfErr)
		if os.Getenv(localbinary.PluginEnvKey) == localbinary.PluginEnvVal {
			// rancher-machine shows a plugin's stderr only with --debug, and dials the first line of its stdout
			// as the plugin's address (libmachine/drivers/plugin/localbinary plugin.go, execServer): a line
			// without a colon comes back whole in its error, "dial tcp: address <line>: missing port in address".
			fmt.Println(strings.ReplaceAll(refusedLine(), ":", ""))
		}
		os.Exit(1)
	}
	// rancher-machine starts its plugin with ITS OWN command line (create -d harvester …) and this token, so the
	// token decides, before any argument is looked at. Nothing may reach stdout before RegisterDriver prints the
	// RPC address: rancher-machine reads it as the first line.
	if os.Getenv(localbinary.PluginEnvKey) == localbinary.PluginEnvVal || len(os.Args) < 2 {
		// Without the token RegisterDriver prints its help to stderr and exits 1: Rancher runs the bare binary
		// that way to check that it is executable. The driver's name is the executable's: installed as
		// docker-machine-driver-<name> it is the driver <name> (see harvester/identity.go).
		plugin.RegisterDriver(harvester.NewNamedDriver(self, "", ""))
		return
	}
	os.Exit(run(os.Args[1], os.Args[2:], os.LookupEnv, os.Stdout, os.Stderr))
}

// run runs one subcommand and returns its exit code: 0 when it did its job, 1 when it failed, 2 for a
// malformed command line.
func run(cmd string, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	switch cmd {
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "%s %s\n", program(), version.String())
		return 0
	case "render":
		return render(args, lookupEnv, stdout, stderr)
	case "check":
		return check(args, lookupEnv, stdout, stderr)
	case "cloud-provider-config":
		return cloudProviderConfig(args, lookupEnv, stdout, stderr)
	case "flags":
		return flagsVerb(args, stdout, stderr)
	case "help", "--help", "-h":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "%s\n\n", unknownCommand(cmd))
		usage(stderr)
		return 2
	}
}

// verbs are the commands run takes, for unknownCommand's suggestion.
var verbs = []string{"render", "check", "cloud-provider-config", "flags", "version", "help"}

// machineCommands are rancher-machine's commands (rancher/machine commands/commands.go), which a user may give
// the plugin by mistake.
var machineCommands = []string{"create", "rm", "ls", "ssh", "scp", "start", "stop", "restart", "kill", "ip", "status",
	"inspect", "env", "config", "url", "provision", "regenerate-certs", "upgrade", "active", "mount"}

// unknownCommand words a command run does not know: a verb mistyped (chek) is named, a command of rancher-machine
// sent to rancher-machine.
func unknownCommand(cmd string) string {
	best, distance := "", 3
	for _, v := range verbs {
		if d := editDistance(strings.ToLower(cmd), v); d < distance {
			best, distance = v, d
		}
	}
	switch {
	case best != "":
		return config.Redact(fmt.Sprintf("unknown command %q: did you mean %s? The commands are below", cmd, best))
	case slices.Contains(machineCommands, cmd):
		return config.Redact(fmt.Sprintf("unknown command %q: %s is the plugin that rancher-machine runs; %s is a command of rancher-machine (rancher-machine %s -d %s …)",
			cmd, program(), cmd, cmd, self.Name()))
	}
	return config.Redact(fmt.Sprintf("unknown command %q: the commands are below", cmd))
}

// usage prints the help under self's names: the program, the driver name and the flags.
func usage(w io.Writer) {
	fmt.Fprint(w, strings.NewReplacer("PROGRAM", program(), "DRIVER", self.Name()).Replace(`PROGRAM is the Harvester node driver for rancher-machine, docker-machine and Rancher.
It is started by them as a plugin (driver name "DRIVER"); by hand it offers:

  render --machine-name NAME [--DRIVER-... flags]
        print the cloud-init Secret and the VirtualMachine a create would make, without touching a cluster
  check --machine-name NAME [--machine-config FILE [--cluster FILE [--pool NAME]]] [--count N] [--DRIVER-... flags]
        run a create's pre-flight against Harvester with these flags and environment, one line per check (ok,
        problem with its reason, skipped; only the credential's when Harvester cannot be reached or refuses it);
        it creates and changes nothing; exit code 1 on any problem.
        --machine-config reads a Rancher machine config (kubectl get DRIVERconfig NAME -o yaml; - for stdin),
        flags given win over its fields; --cluster reads its provisioning cluster (kubectl get
        clusters.provisioning.cattle.io NAME -o yaml) and drops the fields the pool's schema lacks, as Rancher
        does; --count checks that many machines of the pool at once (default: the pool's quantity)
  cloud-provider-config --namespace NS --cluster-name NAME [--server https://VIP:6443]
        create the guest cluster's scoped cloud provider / CSI account in Harvester and print its kubeconfig
  flags [--json] [--driver NAME]
        print the flag table as JSON (flag, Rancher's machine-config field, environment variable, kind, declared
        and applied default, group, usage) under this executable's driver name or NAME
  version
        print the version
  help
        print this help
`))
}
