package main

import (
	"os"
	"path/filepath"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// self is the driver name this copy of the binary answers to, from its executable name (see
// harvester.IdentityFromExecutable): installed as docker-machine-driver-hcivm, every verb reads --hcivm-… flags and
// $HCIVM_… variables, as the plugin does, and names them in its output. selfErr says why the binary must not run
// under its name; main refuses to start then (self is the canonical identity, for tests that call run directly).
var self, selfErr = harvester.IdentityFromExecutable(os.Args[0])

// program is the executable's name under self: docker-machine-driver-<name>.
func program() string { return identity.BinaryPrefix + self.Name() }

// named is s (an error or a line of output) in self's flag and variable names.
func named(s string) string { return self.Text(s) }

// flagsHint is how usage lines name the driver's flags: "--harvester-... flags".
func flagsHint(id identity.Identity) string { return "--" + id.Name() + "-... flags" }

// refusedLine is, on one line, why this executable is no driver: for rancher-machine, which shows only this.
func refusedLine() string {
	return filepath.Base(os.Args[0]) + " is no driver, its name breaks the rule (" + identity.NameRule + "); install it as " +
		identity.BinaryPrefix + identity.Canonical + " or as " + identity.BinaryPrefix + "<name> (rancher-machine --debug says more)"
}
