package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rancher/machine/libmachine/log"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/autoscale"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// stdin is what `check --machine-config -` reads; tests replace it.
var stdin io.Reader = os.Stdin

// check runs `docker-machine-driver-harvester check --machine-name NAME [--machine-config FILE [--cluster FILE
// [--pool NAME]]] [--count N] [--harvester-… flags]`: the pre-flight of a create with these flags and environment
// against the cluster (harvester.PreflightPool), one line per check — "ok", "problem" (a line per problem) or
// "skipped" (with why: not configured, or a read the credential may not make) —, then the "admission" line: what
// the cluster's admission webhooks say of the create's Secret and VM, sent as dry runs. It creates and changes
// nothing; only the credential's line when the credential cannot be used at all (Harvester unreachable, the token
// refused), which ends the pre-flight. The exit code is 1 when a check found a problem or the flags are invalid,
// 2 for a malformed command line.
//
// --machine-config reads a machine-config object (a HarvesterConfig as kubectl prints it; machineCommand)
// and puts the command line Rancher would build from it before the command line given, so a flag given wins
// over the file's field, and the file's field over the flag's environment variable — as for Rancher, where the
// machine config gives flags and the cloud credential environment variables. --count N checks N machines of
// the configuration at once, a machine pool's quantity. --cluster reads the provisioning cluster the machine
// config's pool is in (or the pool's dynamicSchemaSpec alone): the fields the pool's copy of the driver's schema
// lacks are dropped as Rancher drops them, and named on a "pool schema" line before the pre-flight's; the
// cluster also gives the pool's quantity (for --count) and, for driver harvester, --harvester-cluster-name.
// After the checks and a blank line come the machineDeploymentAnnotations a pool of the machine needs to autoscale
// from zero machines, as YAML to paste under the pool (with --cluster, the pool's, with its labels and taints;
// printCheckAutoscaling).
//
// Under a second name (docker-machine-driver-hcivm) it reads --hcivm-… flags and $HCIVM_… variables, and its
// output names them.
func check(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	in, err := parseCheckArgs(args, lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "check: %s\nusage: check --machine-name NAME [--machine-config FILE [--cluster FILE [--pool NAME]]] [--count N] [%s]\n", named(err.Error()), flagsHint(self))
		return 2
	}
	// What the pool's schema drops is known before Harvester is asked: its line comes first.
	code := 0
	if in.schema != nil {
		code = printChecks(stdout, []preflight.Check{*in.schema})
	}
	// The driver's progress lines go to stderr: stdout is the checks.
	log.SetOutWriter(stderr)
	result, err := harvester.PreflightPool(context.Background(), in.machineName, in.opts, in.count)
	if err != nil {
		fmt.Fprintln(stderr, named(err.Error()))
		return 1
	}
	code = max(code, printChecks(stdout, result.Checks))
	printCheckAutoscaling(result, in.pool, stdout)
	return code
}

// checkInput is what check's command line, environment and machine config give.
type checkInput struct {
	machineName string
	opts        config.Options
	count       int
	// schema is the line of what the pool's schema drops (--cluster), nil without.
	schema *preflight.Check
	// pool is the pool of the machine config in --cluster, nil without.
	pool *autoscale.Pool
}

// countFlag is --count: the number, whether it was given (else the pool's quantity counts), and whether what was
// given is a number (else its problem is told, not its range).
type countFlag struct {
	n          int
	set, valid bool
}

func (c *countFlag) String() string { return strconv.Itoa(c.n) }

func (c *countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		c.valid = false
		return errors.New("must be a whole number")
	}
	c.n, c.set = n, true
	return nil
}

// parseCheckArgs reads check's command line: the driver's flags and environment, the machine config's fields
// before the flags given, --machine-name (required) and --count (1 to preflight.MaxPoolSize; with --cluster the
// pool's quantity when not given). --cluster and --pool need --machine-config.
func parseCheckArgs(args []string, lookupEnv func(string) (string, bool)) (checkInput, error) {
	var (
		machineConfig, cluster, pool string
		count                        countFlag
		in                           checkInput
	)
	extra := func(fs *flag.FlagSet) {
		fs.StringVar(&machineConfig, "machine-config", "", "a machine-config object (kubectl get "+self.Name()+"config NAME -o yaml), - for stdin")
		fs.StringVar(&cluster, "cluster", "", "the machine config's provisioning cluster (kubectl get clusters.provisioning.cattle.io NAME -o yaml) or its pool's dynamicSchemaSpec, - for stdin")
		fs.StringVar(&pool, "pool", "", "the pool of --cluster that uses the machine config, when several do")
		count = countFlag{n: 1, valid: true}
		fs.Var(&count, "count", "how many machines of this configuration to check at once (the pool's quantity)")
	}
	var err error
	in.machineName, in.opts, err = parseMachineArgs(args, lookupEnv, extra)
	switch {
	case err == nil && machineConfig != "":
		var cmd rancherCommand
		if cmd, err = machineConfigFlags(machineConfig, cluster, pool); err == nil {
			in.machineName, in.opts, err = parseMachineArgs(append(cmd.args, args...), lookupEnv, extra)
			in.schema, in.pool = cmd.schema, cmd.pool
			if !count.set && cmd.quantity > preflight.MaxPoolSize {
				err = fmt.Errorf("--cluster: the pool's quantity is %d, more than check takes at once (%d): give --count", cmd.quantity, preflight.MaxPoolSize)
			} else if !count.set && cmd.quantity > 0 {
				count.n = int(cmd.quantity)
			}
		}
	case err == nil && (cluster != "" || pool != ""):
		err = errors.New("--cluster and --pool need --machine-config: they say what Rancher drops from it")
	}
	in.count = count.n
	// --count's range is one more problem of the command line, told beside the others.
	if count.valid && (in.count < 1 || in.count > preflight.MaxPoolSize) {
		problems := &config.ArgsError{}
		if err != nil && !errors.As(err, &problems) {
			return checkInput{}, err
		}
		problems.Problemf("--count must be 1 to %d: the number of machines in the pool, checked at once", preflight.MaxPoolSize)
		err = problems
	}
	if err != nil {
		return checkInput{}, err
	}
	return in, nil
}

// machineConfigFlags reads --machine-config, and --cluster when given, and returns what Rancher would make of
// them.
func machineConfigFlags(path, clusterPath, pool string) (rancherCommand, error) {
	if path == "-" && clusterPath == "-" {
		return rancherCommand{}, errors.New("--machine-config and --cluster cannot both read stdin")
	}
	data, err := readMachineConfig(path, stdin)
	if err != nil {
		return rancherCommand{}, err
	}
	var from *poolSource
	if clusterPath != "" {
		clusterData, err := readObjectFile("--cluster", "a provisioning cluster", clusterPath, stdin)
		if err != nil {
			return rancherCommand{}, err
		}
		if from, err = parsePoolSource(clusterData, pool); err != nil {
			return rancherCommand{}, err
		}
	} else if pool != "" {
		return rancherCommand{}, errors.New("--pool names a pool of --cluster: give --cluster too")
	}
	return machineCommand(data, self, from)
}

// printChecks writes one line per check (a line per problem) and returns the exit code: 1 when a check found a
// problem, else 0 — a skipped check fails nothing. Flags and variables are named as self names them.
func printChecks(stdout io.Writer, checks []preflight.Check) int {
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
