package config

import (
	"flag"
	"fmt"
	"strings"
)

// ArgsError is everything wrong with a command line of the verbs (render, check, cloud-provider-config, flags),
// reported at once as the flags' values are: one line per problem, each naming its flag or argument.
type ArgsError struct {
	Problems []string
}

// Problemf adds a problem, redacted.
func (e *ArgsError) Problemf(format string, args ...any) {
	e.Problems = append(e.Problems, Redact(fmt.Sprintf(format, args...)))
}

func (e *ArgsError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems with the command line:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// ParseFlagSet parses args into fs (whose output should be discarded) past every problem, and returns the
// problems, redacted: a value its flag cannot take (--harvester-cpu-count two: "must be a whole number, got
// "two""), a flag fs does not define, a flag without its value, an argument that is no flag. Go's flag package
// stops at the first (FlagSet.Parse returns on the first error, src/flag/flag.go parseOne), so each flag's Value
// is wrapped to record a refused value instead of failing, and the parse resumes after any other error. After
// an undefined flag written without "=", the next argument, when it is no flag, is taken as its value and
// skipped, rather than reported again as an unexpected argument.
func ParseFlagSet(fs *flag.FlagSet, args []string) []string {
	var problems []string
	fs.VisitAll(func(f *flag.Flag) {
		f.Value = &lenientValue{Value: f.Value, name: f.Name, problems: &problems}
	})
	rest := args
	for len(rest) > 0 {
		err := fs.Parse(rest)
		left := fs.Args()
		if err == nil {
			if len(left) == 0 {
				break
			}
			problems = append(problems, Redact(fmt.Sprintf("unexpected argument %q", left[0])))
			rest = left[1:]
			continue
		}
		problems = append(problems, Redact(err.Error()))
		if len(left) == len(rest) { // bad flag syntax: parseOne did not take the argument
			left = left[1:]
		}
		if undefined := rest[len(rest)-len(left)-1]; strings.HasPrefix(err.Error(), "flag provided but not defined") &&
			!strings.Contains(undefined, "=") && len(left) > 0 && !strings.HasPrefix(left[0], "-") {
			left = left[1:]
		}
		rest = left
	}
	return problems
}

// lenientValue is a flag's Value that records a value it refuses as a problem of the flag, and lets the parse go
// on.
type lenientValue struct {
	flag.Value
	name     string
	problems *[]string
}

func (v *lenientValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		why := err.Error()
		if g, ok := v.Value.(flag.Getter); ok { // Go's own int and bool values say only "parse error"
			switch g.Get().(type) {
			case bool:
				why = "must be true or false"
			case int, int64, uint, uint64:
				why = "must be a whole number"
			}
		}
		*v.problems = append(*v.problems, Redact(fmt.Sprintf("--%s: %s, got %q", v.name, why, s)))
	}
	return nil
}

// IsBoolFlag tells the flag package that a bool flag needs no value (--harvester-enable-efi).
func (v *lenientValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Get is the wrapped value's, for flag.Getter.
func (v *lenientValue) Get() any {
	if g, ok := v.Value.(flag.Getter); ok {
		return g.Get()
	}
	return v.Value.String()
}
