package harvester

import (
	"fmt"
	"strings"
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

// addErr records err against the flag its message starts with ("--harvester-user-data: …", the form the
// cloudinit and userdata packages use), or against defaultFlag when it names none.
func (p *problems) addErr(defaultFlag string, err error) {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "--"+flagPrefix); ok {
		if name, m, ok := strings.Cut(rest, ": "); ok && !strings.ContainsAny(name, " /") {
			p.list = append(p.list, Problem{Flag: flagPrefix + name, Message: m})
			return
		}
	}
	p.list = append(p.list, Problem{Flag: defaultFlag, Message: msg})
}
