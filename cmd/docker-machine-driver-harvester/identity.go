package main

import (
	"os"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// self is the driver name this copy of the binary answers to, from its executable name (see
// harvester.IdentityFromExecutable): installed as docker-machine-driver-hcivm, render and check read --hcivm-…
// flags and $HCIVM_… variables, as the plugin does, and name them in their output.
var self = harvester.IdentityFromExecutable(os.Args[0])

// named is s (an error or a line of output) in self's flag and variable names.
func named(s string) string { return self.Text(s) }

// flagsHint is how usage lines name the driver's flags: "--harvester-... flags".
func flagsHint(id identity.Identity) string { return "--" + id.Name() + "-... flags" }
