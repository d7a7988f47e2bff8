package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirPrefix names the temporary directories of control planes; ownerFile holds the pid of the process that made one.
const (
	dirPrefix = "dmdh-controlplane-"
	ownerFile = "owner.pid"
)

// newOwnedDir makes a temporary directory stamped with this process's pid.
func newOwnedDir() (string, error) {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// sweepStaleDirs removes control-plane directories left by processes that no longer exist (a test binary killed
// before its cleanup ran; its servers died with it through Pdeathsig).
func sweepStaleDirs() {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being created
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
