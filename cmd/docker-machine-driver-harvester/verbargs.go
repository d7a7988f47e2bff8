package main

import (
	"flag"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// parseMachineArgs reads what render and check share: --machine-name and the driver's flags under self's names
// (flag, else environment variable, else default; see config.ParseArgsNamed). extra registers a verb's own
// flags. Errors are in self's names.
func parseMachineArgs(args []string, lookupEnv func(string) (string, bool), extra func(*flag.FlagSet)) (string, config.Options, error) {
	var machineName string
	opts, err := config.ParseArgsNamed(args, lookupEnv, func(fs *flag.FlagSet) {
		fs.StringVar(&machineName, "machine-name", "", "name of the machine (and of its VM)")
		if extra != nil {
			extra(fs)
		}
	}, self)
	return machineName, opts, err
}
