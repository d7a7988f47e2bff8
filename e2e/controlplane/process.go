package controlplane

import (
	"context"
	"time"

	proc "github.com/harvester/docker-machine-driver-harvester/e2e/internal/process"
)

// process is one server of the control plane: a proc.Process with the names the rest of this package uses.
type process struct {
	*proc.Process
	name string
	done <-chan struct{}
}

// startProcess starts bin with args, stdout and stderr appended to logPath (see proc.Start).
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	p, err := proc.Start(name, bin, args, logPath)
	if err != nil {
		return nil, err
	}
	return &process{Process: p, name: name, done: p.Done()}, nil
}

func (p *process) exited() (bool, error) { return p.Exited() }

func (p *process) stop(grace time.Duration) { p.Stop(grace) }

// pollReady asks probe until it succeeds, the process exits, or ctx ends (see proc.Process.PollReady).
func pollReady(ctx context.Context, p *process, probe func(context.Context) error) error {
	return p.PollReady(ctx, probe)
}

func tailFile(path string, n int) string { return proc.TailFile(path, n) }
