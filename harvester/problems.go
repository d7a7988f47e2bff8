package harvester

import (
	"errors"
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
)

// Problem is one thing wrong with the machine's configuration, tied to the flag that carries it.
type Problem struct {
	Flag    string // flag name without dashes, e.g. harvester-disk-info; "" for the machine name
	Message string
}

func (p Problem) String() string {
	if p.Flag == "" {
		return p.Message
	}
	return "--" + p.Flag + ": " + p.Message
}

// ConfigError reports every problem found in a configuration at once, so one failed run tells the user all that
// needs fixing.
type ConfigError struct {
	// Title says what was checked; "invalid machine configuration" when empty.
	Title    string
	Problems []Problem
}

func (e *ConfigError) Error() string {
	title := e.Title
	if title == "" {
		title = "invalid machine configuration"
	}
	lines := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	if len(lines) == 1 {
		return title + ": " + lines[0]
	}
	return fmt.Sprintf("%s (%d problems):\n  %s", title, len(lines), strings.Join(lines, "\n  "))
}

// problems collects Problems; its zero value is ready to use.
type problems struct {
	list []Problem
}

func (p *problems) addf(flag, format string, args ...any) {
	p.list = append(p.list, Problem{Flag: flag, Message: fmt.Sprintf(format, args...)})
}

// err returns a *ConfigError holding the problems, or nil when there are none.
func (p *problems) err() error { return p.errTitled("") }

// errTitled is err with a title saying what was checked.
func (p *problems) errTitled(title string) error {
	if len(p.list) == 0 {
		return nil
	}
	return &ConfigError{Title: title, Problems: p.list}
}

// cloudInitFlags are the flags that carry each part of cloudinit's input. The driver's own files have no flag.
var cloudInitFlags = map[cloudinit.Part]string{
	cloudinit.PartUser:        FlagUserData,
	cloudinit.PartRancher:     FlagCloudConfig,
	cloudinit.PartSSHPassword: FlagSSHPassword,
}

// addCloudInit files each error of package cloudinit (one, or several joined) under the flag of the part it
// names. An error that names no part is filed under the user data, the part users write.
func (p *problems) addCloudInit(err error) {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, err := range errs {
		var e *cloudinit.Error
		if errors.As(err, &e) {
			p.list = append(p.list, Problem{Flag: cloudInitFlags[e.Part], Message: e.Message()})
		} else {
			p.addf(FlagUserData, "%v", err)
		}
	}
}
