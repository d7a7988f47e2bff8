// Package process runs the test bed's server binaries (etcd, kube-apiserver, kube-controller-manager, KubeVirt's
// and Harvester's webhooks): each in its own process group, killed with its parent, its output appended to a log
// file.
package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	watchtools "k8s.io/client-go/tools/watch"
)

// Process is one server binary running in its own process group, its output appended to a log file.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and err is set
	err     error
}

// Start starts bin with args, stdout and stderr appended to logPath.
//
// The child gets SIGKILL when its parent dies (Pdeathsig), so a test binary that panics, times out or is
// interrupted leaves no server behind. Linux delivers that signal when the *thread* that forked the child exits,
// not the process, and the Go runtime may retire idle threads: the child is therefore started and waited for
// from a goroutine locked to its thread, which lives exactly as long as the child does.
func Start(name, bin string, args []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "=== %s %s: %s %s\n", time.Now().Format(time.RFC3339Nano), name, bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}

	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the child has exited
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	return p, nil
}

// Name is the name given to Start.
func (p *Process) Name() string { return p.name }

// Pid is the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, waits up to grace for it to end, then sends SIGKILL.
// A zero grace kills at once.
func (p *Process) Stop(grace time.Duration) {
	if done, _ := p.Exited(); done {
		return
	}
	pgid := -p.cmd.Process.Pid
	if grace > 0 {
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-p.done
}

// Pause stops the process group in its tracks (SIGSTOP): its connections stay open and it answers nothing until
// Resume (SIGCONT). Stop ends a paused process too (SIGKILL).
func (p *Process) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused process group.
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) error {
	if done, _ := p.Exited(); done {
		return fmt.Errorf("%s has exited", p.name)
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// PollReady asks probe every 100 ms until it succeeds, the process exits, or ctx ends (default deadline 60 s).
// Polling is right here: a starting server offers nothing to watch.
func (p *Process) PollReady(ctx context.Context, probe func(context.Context) error) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited while starting (%v); see its log", p.name, err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited for %s to become ready: %w; last probe: %v", p.name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string { return TailFile(p.logPath, n) }

// TailFile returns the last n lines of a file (at most its last 64 KiB).
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const window = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	data, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(read log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// GetOK is a readiness probe for PollReady: a GET of url that answers 200 OK.
func GetOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", url, resp.Status)
	}
	return nil
}
