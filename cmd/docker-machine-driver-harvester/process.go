package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	"github.com/rancher/machine/libmachine/log"
	"k8s.io/klog/v2"
)

// heapTarget is the heap size the garbage collector keeps the plugin near (a soft limit: Go's
// debug.SetMemoryLimit). Reading a response is bounded by the client layer's budget (16 MiB for all responses
// read at once), but each read grows a buffer by copying it, and by default the collector lets garbage reach the
// size of the live heap before it runs: ten endless responses read at once left the plugin at up to 97 MB. With
// the target, the same stays under 70 MB. A plugin serves one machine and its live heap is a few MiB, so the
// collector seldom has work to do below the target; $GOMEMLIMIT, when set, wins.
const heapTarget = 48 << 20

// setUpProcess makes the process-wide settings of the plugin: the heap target, and client-go's log lines (klog: a
// response body that could not be read, client-side throttling, …) sent to the driver's debug log instead of
// stderr — they are detail, and the driver words every error that matters to a user itself (rancher-machine
// --debug still shows them).
func setUpProcess() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(heapTarget)
	}
	klog.SetLogger(logr.New(debugSink{}))
}

// debugSink is a logr sink that writes each line to the driver's debug log, with its key-value pairs. (logr's
// funcr would do, at 25 KB of the plugin's size budget.)
type debugSink struct{ name string }

func (debugSink) Init(logr.RuntimeInfo)  {}
func (debugSink) Enabled(level int) bool { return true }

func (s debugSink) Info(_ int, msg string, kv ...any) { s.write(msg, nil, kv) }

func (s debugSink) Error(err error, msg string, kv ...any) { s.write(msg, err, kv) }

func (s debugSink) WithValues(...any) logr.LogSink { return s }

func (s debugSink) WithName(name string) logr.LogSink {
	return debugSink{name: strings.TrimPrefix(s.name+"/"+name, "/")}
}

func (s debugSink) write(msg string, err error, kv []any) {
	var b strings.Builder
	b.WriteString("client-go: ")
	if s.name != "" {
		b.WriteString(s.name + ": ")
	}
	b.WriteString(msg)
	if err != nil {
		fmt.Fprintf(&b, ": %v", err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	log.Debug(b.String())
}
