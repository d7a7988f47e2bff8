// Package repo finds the checkout the test bed runs from and the tools built for it by hack/tools.sh.
package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Root returns the repository root: the nearest directory, upwards from the working directory (or, failing that,
// from this source file), that holds both go.mod and hack/tools.sh. Nested modules such as hack/tools/* have a
// go.mod but no hack/, so they are passed over.
func Root() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "hack", "tools.sh")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("no directory with go.mod and hack/tools.sh above %q: run from inside the checkout", starts)
}

var toolDirs onceByKey[string] // tool name -> directory: one process asks hack/tools.sh once per tool

// ToolDir returns the directory holding the binaries of one hack/tools.sh target ("controlplane",
// "rancher-machine"): the value of envVar when that is set, else what `hack/tools.sh <name>` prints. The script
// builds the binaries when they are missing (tens of minutes on a fresh 2-core machine; its progress goes to
// stderr) and is a no-op afterwards.
//
// A deadline on ctx never cuts a build short, only a cancellation does (an interrupt, say): callers bound the
// start-up of what they run with the binaries, and a first build must not count against that bound.
func ToolDir(ctx context.Context, name, envVar string) (string, error) {
	if dir := os.Getenv(envVar); dir != "" {
		return dir, nil
	}
	return toolDirs.do(ctx, name, func(ctx context.Context) (string, error) { return runTools(ctx, name) })
}

func runTools(ctx context.Context, name string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "tools.sh"), name)
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/tools.sh %s: %w (build log above; it needs the Go module proxy on a fresh machine)", name, err)
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", errors.New("hack/tools.sh " + name + " printed no directory")
	}
	return dir, nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}
