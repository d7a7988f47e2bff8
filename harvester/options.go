package harvester

import (
	"flag"
	"fmt"
	"io"
	"strconv"
)

// Options is a drivers.DriverOptions over a map of flag values: what rancher-machine hands SetConfigFromFlags,
// built here from a command line for the render subcommand and tests. Missing keys read as the flag's default.
type Options map[string]any

// DefaultOptions returns every flag at its default.
func DefaultOptions() Options {
	o := Options{}
	for _, f := range flagTable {
		switch f.kind {
		case stringFlag:
			o[f.name] = f.str
		case intFlag:
			o[f.name] = f.num
		case boolFlag:
			o[f.name] = false
		}
	}
	return o
}

func (o Options) String(key string) string {
	v, _ := o.value(key).(string)
	return v
}

func (o Options) StringSlice(key string) []string {
	v, _ := o.value(key).([]string)
	return v
}

func (o Options) Int(key string) int {
	v, _ := o.value(key).(int)
	return v
}

func (o Options) Bool(key string) bool {
	v, _ := o.value(key).(bool)
	return v
}

func (o Options) value(key string) any {
	if v, ok := o[key]; ok {
		return v
	}
	return DefaultOptions()[key]
}

// ParseArgs reads the driver's flags from args the way rancher-machine's command line does: --flag value or
// --flag=value, a flag's environment variable (HARVESTER_…) when the flag is absent, else its default.
// Arguments that are not driver flags are left to extra, which registers them on the same flag set before
// parsing (nil for none). Errors name the flag.
func ParseArgs(args []string, lookupEnv func(string) (string, bool), extra func(*flag.FlagSet)) (Options, error) {
	fs := flag.NewFlagSet("harvester", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if extra != nil {
		extra(fs)
	}
	o := DefaultOptions()
	strs := map[string]*string{}
	ints := map[string]*int{}
	bools := map[string]*bool{}
	for _, f := range flagTable {
		switch f.kind {
		case stringFlag:
			strs[f.name] = fs.String(f.name, f.str, f.usage)
		case intFlag:
			ints[f.name] = fs.Int(f.name, f.num, f.usage)
		case boolFlag:
			bools[f.name] = fs.Bool(f.name, false, f.usage)
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, f := range flagTable {
		env, fromEnv := "", false
		if !given[f.name] && lookupEnv != nil {
			env, fromEnv = lookupEnv(EnvVar(f.name))
		}
		switch f.kind {
		case stringFlag:
			o[f.name] = *strs[f.name]
			if fromEnv {
				o[f.name] = env
			}
		case intFlag:
			o[f.name] = *ints[f.name]
			if fromEnv {
				n, err := strconv.Atoi(env)
				if err != nil {
					return nil, fmt.Errorf("$%s: must be a whole number, got %q", EnvVar(f.name), env)
				}
				o[f.name] = n
			}
		case boolFlag:
			o[f.name] = *bools[f.name]
			if fromEnv {
				b, err := strconv.ParseBool(env)
				if err != nil {
					return nil, fmt.Errorf("$%s: must be true or false, got %q", EnvVar(f.name), env)
				}
				o[f.name] = b
			}
		}
	}
	return o, nil
}
