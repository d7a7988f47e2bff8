// Package logging is the driver's two log streams. It follows what rancher-machine does with a plugin's output: a
// line on the plugin's stdout is shown to the user ("(machine) …"), a line on its stderr only in debug mode
// ("(machine) DBG | …"). Milestones a Rancher user should see go to rancher/machine's log at Info (stdout).
// Detail goes to stderr directly: rancher/machine's logger writes Debug to stdout as soon as RegisterDriver turns
// debugging on, which would put every detail in front of the user and into the 4 KiB of output Rancher keeps as
// the machine's error. It imports nothing of the driver's.
package logging

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/rancher/machine/libmachine/log"
)

var (
	debugMu  sync.Mutex
	debugOut io.Writer = os.Stderr
)

// Infof logs a milestone the user sees.
func Infof(format string, args ...any) { log.Infof(format, args...) }

// Debugf logs a detail for debugging.
func Debugf(format string, args ...any) {
	debugMu.Lock()
	defer debugMu.Unlock()
	fmt.Fprintf(debugOut, format+"\n", args...)
}

// SetDebugOutput sends the detail to w (tests capture it) and returns the writer it went to before.
func SetDebugOutput(w io.Writer) io.Writer {
	debugMu.Lock()
	defer debugMu.Unlock()
	old := debugOut
	debugOut = w
	return old
}
