package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/harvester/docker-machine-driver-harvester/harvester/build"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// render runs `docker-machine-driver-harvester render --machine-name NAME [--harvester-… flags]`: it prints, as
// YAML, the cloud-init Secret and the VirtualMachine a create with these flags would make (build.Render). It
// never contacts a cluster. Invalid flags print the same aggregated problems a create reports, and the exit code
// is 1 (2 for a malformed command line).
func render(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	var machineName string
	opts, err := config.ParseArgs(args, lookupEnv, func(fs *flag.FlagSet) {
		fs.StringVar(&machineName, "machine-name", "", "name of the machine (and of its VM)")
	})
	if err != nil {
		fmt.Fprintf(stderr, "render: %v\nusage: render --machine-name NAME [--harvester-... flags]\n", err)
		return 2
	}
	if machineName == "" {
		fmt.Fprintln(stderr, "render: --machine-name is required: the name of the machine, which names its VM")
		return 2
	}
	cfg, err := config.ParseConfig(machineName, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	out, err := build.Render(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
