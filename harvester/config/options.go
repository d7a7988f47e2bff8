package config

import (
	"errors"
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

// String returns a string flag's value ("" when missing or of another kind).
func (o Options) String(key string) string {
	v, _ := o.value(key).(string)
	return v
}

// StringSlice returns a string-slice flag's value.
func (o Options) StringSlice(key string) []string {
	v, _ := o.value(key).([]string)
	return v
}

// Int returns an int flag's value (0 when missing or of another kind).
func (o Options) Int(key string) int {
	v, _ := o.value(key).(int)
	return v
}

// Bool returns a bool flag's value.
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
	return ParseArgsNamed(args, lookupEnv, extra, canonicalNames{})
}

// Names gives the command-line flag and the environment variable of a canonical flag (harvester-cpu-count):
// the driver's names under the name it runs as (harvester/identity.Identity).
type Names interface {
	Flag(canonical string) string
	EnvVar(canonical string) string
}

// canonicalNames are the flag table's own names.
type canonicalNames struct{}

func (canonicalNames) Flag(canonical string) string   { return canonical }
func (canonicalNames) EnvVar(canonical string) string { return EnvVar(canonical) }

// ParseArgsNamed is ParseArgs with each flag and environment variable under its names in names (--hcivm-cpu-count
// and $HCIVM_CPU_COUNT for a driver installed as docker-machine-driver-hcivm): only those are read, and errors
// name them. The options are keyed by the canonical names, as SetConfigFromFlags reads them. Every problem of the
// command line and the environment is reported at once, in an *ArgsError (ParseFlagSet).
func ParseArgsNamed(args []string, lookupEnv func(string) (string, bool), extra func(*flag.FlagSet), names Names) (Options, error) {
	fs := flag.NewFlagSet("harvester", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if extra != nil {
		extra(fs)
	}
	for _, f := range flagTable {
		name := names.Flag(f.name)
		switch f.kind {
		case stringFlag:
			fs.String(name, f.str, f.usage)
		case intFlag:
			fs.Int(name, f.num, f.usage)
		case boolFlag:
			fs.Bool(name, false, f.usage)
		}
	}
	problems := ParseFlagSet(fs, args)
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	o := Options{}
	for _, f := range flagTable {
		name, env := names.Flag(f.name), names.EnvVar(f.name)
		o[f.name] = fs.Lookup(name).Value.(flag.Getter).Get()
		if given[name] || lookupEnv == nil {
			continue
		}
		if v, ok := lookupEnv(env); ok {
			parsed, err := f.kind.parse(v)
			if err != nil {
				problems = append(problems, Redact(fmt.Sprintf("$%s: %v, got %q", env, err, v)))
				continue
			}
			o[f.name] = parsed
		}
	}
	if len(problems) > 0 {
		return nil, &ArgsError{Problems: problems}
	}
	return o, nil
}

// parse reads a value of the kind from text, as an environment variable gives it.
func (k flagKind) parse(text string) (any, error) {
	switch k {
	case intFlag:
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, errors.New("must be a whole number")
		}
		return n, nil
	case boolFlag:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, errors.New("must be true or false")
		}
		return b, nil
	}
	return text, nil
}
