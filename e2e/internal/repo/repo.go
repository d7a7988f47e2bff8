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
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// Root returns the repository root (testenv.RepoRoot): the nearest directory above the working directory, or
// this module's source, that holds both go.mod and hack/tools.sh.
func Root() (string, error) { return testenv.RepoRoot() }

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
