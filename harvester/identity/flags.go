package identity

import (
	"github.com/rancher/machine/libmachine/drivers"
	"github.com/rancher/machine/libmachine/mcnflag"
)

// Flags is the canonical flag list as the identity declares it: each flag's name, environment variable and the
// flags its usage text names in the identity's names; kinds and defaults unchanged. The Canonical identity
// returns flags itself.
func (id Identity) Flags(flags []mcnflag.Flag) []mcnflag.Flag {
	if !id.Renamed() {
		return flags
	}
	out := make([]mcnflag.Flag, 0, len(flags))
	for _, f := range flags {
		out = append(out, id.flag(f))
	}
	return out
}

func (id Identity) flag(f mcnflag.Flag) mcnflag.Flag {
	switch f := f.(type) {
	case *mcnflag.StringFlag:
		return &mcnflag.StringFlag{Name: id.Flag(f.Name), EnvVar: id.EnvVar(f.Name), Usage: id.Text(f.Usage), Value: f.Value}
	case *mcnflag.IntFlag:
		return &mcnflag.IntFlag{Name: id.Flag(f.Name), EnvVar: id.EnvVar(f.Name), Usage: id.Text(f.Usage), Value: f.Value}
	case *mcnflag.BoolFlag:
		return &mcnflag.BoolFlag{Name: id.Flag(f.Name), EnvVar: id.EnvVar(f.Name), Usage: id.Text(f.Usage)}
	case *mcnflag.StringSliceFlag:
		return &mcnflag.StringSliceFlag{Name: id.Flag(f.Name), EnvVar: id.EnvVar(f.Name), Usage: id.Text(f.Usage),
			Value: append([]string(nil), f.Value...)}
	}
	return f
}

// Options reads the identity's flag values by their canonical names: what rancher-machine hands
// SetConfigFromFlags is keyed by the flags the plugin declared (<name>-cpu-count), the config parser asks for
// harvester-cpu-count. The Canonical identity returns opts itself.
func (id Identity) Options(opts drivers.DriverOptions) drivers.DriverOptions {
	if !id.Renamed() {
		return opts
	}
	return renamedOptions{id: id, opts: opts}
}

type renamedOptions struct {
	id   Identity
	opts drivers.DriverOptions
}

func (o renamedOptions) String(key string) string { return o.opts.String(o.id.Flag(key)) }
func (o renamedOptions) StringSlice(key string) []string {
	return o.opts.StringSlice(o.id.Flag(key))
}
func (o renamedOptions) Int(key string) int   { return o.opts.Int(o.id.Flag(key)) }
func (o renamedOptions) Bool(key string) bool { return o.opts.Bool(o.id.Flag(key)) }
