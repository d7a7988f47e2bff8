// Command peakrss runs a command and writes its peak resident memory, in KiB, to a file: the plugin tests' meter.
//
//	peakrss FILE LIMIT-KIB COMMAND [ARG...]
//
// It exists because a child's own rusage cannot tell: Go starts a child with clone(CLONE_VM|CLONE_VFORK), so the
// child runs in its parent's address space until it execs, and Linux carries that space's high-water mark into
// the child's ru_maxrss at the exec (fs/exec.c exec_mmap, setmax_mm_hiwater_rss). A plugin started by a test
// binary would thus report the test binary's peak, which grows with every test before it (and under -race). This
// small process starts the command instead, so the carried mark is its own few MB. The command's address space is
// limited to LIMIT-KIB (an input read without bound fails the test instead of filling the machine), it gets a
// SIGKILL when this process dies (the test's timeout kills this one), and this process exits with its exit code.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: peakrss FILE LIMIT-KIB COMMAND [ARG...]")
		os.Exit(2)
	}
	limit, err := strconv.ParseUint(os.Args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss: LIMIT-KIB:", err)
		os.Exit(2)
	}
	// RLIMIT_AS for this process, inherited by the command; this one needs far less.
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit << 10, Max: limit << 10}); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss: setrlimit:", err)
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[3], os.Args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runErr := cmd.Run()
	code := 0
	if exit, ok := runErr.(*exec.ExitError); ok {
		code = exit.ExitCode()
		if code < 0 { // killed by a signal
			code = 128 + int(exit.Sys().(syscall.WaitStatus).Signal())
		}
	} else if runErr != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", runErr)
		os.Exit(2)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if err := os.WriteFile(os.Args[1], []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "peakrss:", err)
			os.Exit(2)
		}
	}
	os.Exit(code)
}
