// Package ownedtemp makes temporary directories that a later run can clean up after a crash: each is stamped
// with the pid of the process that made it, and making one first removes those of the same kind whose process no
// longer exists (a test binary killed before its cleanup ran: SIGKILL, go test's -timeout, an OOM kill; the
// servers and guests it started died with it through Pdeathsig, their files did not).
package ownedtemp

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const ownerFile = "owner.pid"

// Dir removes the stale directories named prefix* in os.TempDir() (see Sweep) and makes a new one, owned by
// this process.
func Dir(prefix string) (string, error) {
	Sweep(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Sweep removes the directories named prefix* in os.TempDir() whose owner process no longer exists. A directory
// without an owner file is left alone: not made by Dir, or still being made.
func Sweep(prefix string) {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			continue
		}
		if !processAlive(pid) {
			_ = os.RemoveAll(dir)
		}
	}
}

// processAlive reports whether a process with this pid exists (signal 0 probes without signalling).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
