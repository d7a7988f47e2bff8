package main

import (
	"errors"
	"flag"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// parseMachineArgs reads what render and check share: --machine-name (required) and the driver's flags under
// self's names (flag, else environment variable, else default; see config.ParseArgsNamed). extra registers a
// verb's own flags. Every problem of the command line is in the error at once (*config.ArgsError), in self's names.
func parseMachineArgs(args []string, lookupEnv func(string) (string, bool), extra func(*flag.FlagSet)) (string, config.Options, error) {
	var machineName string
	opts, err := config.ParseArgsNamed(args, lookupEnv, func(fs *flag.FlagSet) {
		fs.StringVar(&machineName, "machine-name", "", "name of the machine (and of its VM)")
		if extra != nil {
			extra(fs)
		}
	}, self)
	if machineName == "" {
		problems := &config.ArgsError{}
		if !errors.As(err, &problems) && err != nil {
			return "", nil, err
		}
		problems.Problemf("--machine-name is required: the name of the machine, which names its VM")
		err = problems
	}
	return machineName, opts, err
}
