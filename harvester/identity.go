package harvester

import (
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// The same binary serves a second node driver: installed as docker-machine-driver-<name> (identity.NameRule), it
// is the driver <name>; under a suffix of any other form it refuses to start. DriverName says <name>, so rancher-machine saves it with each machine and finds this
// binary again; GetCreateFlags declares <name>-… flags with <NAME>_… environment variables, the names Rancher
// builds for a node driver called <name> (pkg/controllers/capr/machineprovision/args.go: toArgs for the flags,
// getArgsEnvAndStatus for the cloud credential's variables); SetConfigFromFlags reads them back by their
// canonical names; and every error the driver returns names the <name>- flags. Everything else — the VMs, their
// labels (harvesterhci.io/creator stays docker-machine-driver-harvester, which Harvester keys on), the saved
// fields — is the same under either name. Installed under its own name, no translation happens at all.

// IdentityFromExecutable is the identity of the plugin run as path, normally os.Args[0], or why the binary must not
// run under that name (see identity.FromExecutable).
func IdentityFromExecutable(path string) (identity.Identity, error) {
	return identity.FromExecutable(path, flagNames())
}

// NewNamedDriver is NewDriver for a plugin with identity id.
func NewNamedDriver(id identity.Identity, hostName, storePath string) *Driver {
	d := NewDriver(hostName, storePath)
	d.id = id
	return d
}

// named rewrites *err into the driver's flag names; deferred by the methods rancher-machine calls.
func (d *Driver) named(err *error) { *err = d.id.Err(*err) }

// flagNames are the canonical names of all flags.
func flagNames() []string {
	flags := config.CreateFlags()
	names := make([]string, 0, len(flags))
	for _, f := range flags {
		names = append(names, f.String())
	}
	return names
}
