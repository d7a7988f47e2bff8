package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rancher/machine/libmachine/log"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// check runs `docker-machine-driver-harvester check --machine-name NAME [--harvester-… flags]`: the pre-flight of
// a create with these flags and environment against the cluster (harvester.Preflight), one line per check —
// "ok", "problem" (a line per problem) or "skipped" (with why: not configured, or a read the credential may not
// make) — creating and changing nothing. The exit code is 1 when a
// check found a problem or the flags are invalid, 2 for a malformed command line.
func check(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	var machineName string
	opts, err := config.ParseArgs(args, lookupEnv, func(fs *flag.FlagSet) {
		fs.StringVar(&machineName, "machine-name", "", "name of the machine (and of its VM)")
	})
	if err != nil {
		fmt.Fprintf(stderr, "check: %v\nusage: check --machine-name NAME [--harvester-... flags]\n", err)
		return 2
	}
	if machineName == "" {
		fmt.Fprintln(stderr, "check: --machine-name is required: the name of the machine, which names its VM")
		return 2
	}
	// The driver's progress lines go to stderr: stdout is the checks.
	log.SetOutWriter(stderr)
	checks, err := harvester.Preflight(context.Background(), machineName, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return printChecks(stdout, checks)
}

// printChecks writes one line per check (a line per problem) and returns the exit code: 1 when a check found a
// problem, else 0 — a skipped check fails nothing.
func printChecks(stdout io.Writer, checks []harvester.Check) int {
	code := 0
	for _, c := range checks {
		// A check is ok only when it found nothing wrong and looked at everything: a part the credential may not
		// read is "skipped" with why, also beside the problems another part found.
		for _, p := range c.Problems {
			code = 1
			fmt.Fprintf(stdout, "problem  %-20s  %s\n", c.Name, oneLine(p.String()))
		}
		if c.Skipped != "" {
			fmt.Fprintf(stdout, "skipped  %-20s  %s\n", c.Name, oneLine(c.Skipped))
		}
		if len(c.Problems) == 0 && c.Skipped == "" {
			fmt.Fprintln(stdout, strings.TrimRight(fmt.Sprintf("ok       %-20s  %s", c.Name, c.Detail), " "))
		}
	}
	return code
}

// oneLine keeps a check's reason on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
