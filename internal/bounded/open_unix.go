//go:build unix

package bounded

import "syscall"

// openNoBlock makes ReadRegularFile's open return at once whatever the path names by then (a FIFO's open would
// wait for a writer) and never make a terminal the process's controlling terminal. os.OpenFile adds O_CLOEXEC.
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
