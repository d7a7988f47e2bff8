package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rancher/machine/libmachine/log"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// stdin is what `check --machine-config -` reads; tests replace it.
var stdin io.Reader = os.Stdin

// check runs `docker-machine-driver-harvester check --machine-name NAME [--machine-config FILE] [--count N]
// [--harvester-… flags]`: the pre-flight of a create with these flags and environment against the cluster
// (harvester.PreflightPool), one line per check — "ok", "problem" (a line per problem) or "skipped" (with why:
// not configured, or a read the credential may not make) — creating and changing nothing. The exit code is 1
// when a check found a problem or the flags are invalid, 2 for a malformed command line.
//
// --machine-config reads a machine-config object (a HarvesterConfig as kubectl prints it; machineConfigArgs)
// and puts the command line Rancher would build from it before the command line given, so a flag given wins
// over the file's field, and the file's field over the flag's environment variable — as for Rancher, where the
// machine config gives flags and the cloud credential environment variables. --count N checks N machines of
// the configuration at once, a machine pool's quantity.
//
// Under a second name (docker-machine-driver-hcivm) it reads --hcivm-… flags and $HCIVM_… variables, and its
// output names them.
func check(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	in, err := parseCheckArgs(args, lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "check: %s\nusage: check --machine-name NAME [--machine-config FILE] [--count N] [%s]\n", named(err.Error()), flagsHint(self))
		return 2
	}
	// The driver's progress lines go to stderr: stdout is the checks.
	log.SetOutWriter(stderr)
	checks, err := harvester.PreflightPool(context.Background(), in.machineName, in.opts, in.count)
	if err != nil {
		fmt.Fprintln(stderr, named(err.Error()))
		return 1
	}
	return printChecks(stdout, checks)
}

// checkInput is what check's command line, environment and machine config give.
type checkInput struct {
	machineName string
	opts        config.Options
	count       int
}

// parseCheckArgs reads check's command line: the driver's flags and environment, the machine config's fields
// before the flags given, --machine-name (required) and --count (1 to harvester.MaxPoolSize).
func parseCheckArgs(args []string, lookupEnv func(string) (string, bool)) (checkInput, error) {
	var (
		machineConfig string
		in            checkInput
	)
	extra := func(fs *flag.FlagSet) {
		fs.StringVar(&machineConfig, "machine-config", "", "a machine-config object (kubectl get "+self.Name()+"config NAME -o yaml), - for stdin")
		fs.IntVar(&in.count, "count", 1, "how many machines of this configuration to check at once (the pool's quantity)")
	}
	var err error
	in.machineName, in.opts, err = parseMachineArgs(args, lookupEnv, extra)
	if err == nil && machineConfig != "" {
		var fileArgs []string
		if fileArgs, err = machineConfigFlags(machineConfig); err == nil {
			in.machineName, in.opts, err = parseMachineArgs(append(fileArgs, args...), lookupEnv, extra)
		}
	}
	switch {
	case err != nil:
		return checkInput{}, err
	case in.machineName == "":
		return checkInput{}, errors.New("--machine-name is required: the name of the machine, which names its VM")
	case in.count < 1 || in.count > harvester.MaxPoolSize:
		return checkInput{}, fmt.Errorf("--count must be 1 to %d: the number of machines in the pool, checked at once", harvester.MaxPoolSize)
	}
	return in, nil
}

// machineConfigFlags reads --machine-config and returns the flags Rancher would pass for it.
func machineConfigFlags(path string) ([]string, error) {
	data, err := readMachineConfig(path, stdin)
	if err != nil {
		return nil, err
	}
	return machineConfigArgs(data, self)
}

// printChecks writes one line per check (a line per problem) and returns the exit code: 1 when a check found a
// problem, else 0 — a skipped check fails nothing. Flags and variables are named as self names them.
func printChecks(stdout io.Writer, checks []harvester.Check) int {
	code := 0
	for _, c := range checks {
		if len(c.Problems) > 0 {
			code = 1
		}
		for _, line := range c.Lines(named) {
			fmt.Fprintln(stdout, line)
		}
	}
	return code
}
