// Package rmachine runs the real rancher-machine CLI with the plugin under test on $PATH, for the scenarios,
// the demo and the benchmarks.
package rmachine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// BinEnv names a directory holding a rancher-machine binary to use instead of the one hack/tools.sh builds.
const BinEnv = "DMDH_RANCHER_MACHINE_BIN"

// Find returns the path of the real rancher-machine CLI: in $DMDH_RANCHER_MACHINE_BIN, else built from the Go
// module proxy by `hack/tools.sh rancher-machine` (minutes on a fresh machine, a no-op afterwards).
func Find(ctx context.Context) (string, error) {
	dir, err := repo.ToolDir(ctx, "rancher-machine", BinEnv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "rancher-machine"), nil
}

// CLI runs rancher-machine with one machine store and one environment.
type CLI struct {
	Bin       string   // the rancher-machine binary
	Store     string   // --storage-path
	PluginDir string   // directory holding docker-machine-driver-harvester, put first on $PATH
	Env       []string // extra environment, KEY=value (e.g. HARVESTER_KUBECONFIG_CONTENT)
	// NativeSSH makes rancher-machine use its built-in SSH client instead of the ssh binary.
	NativeSSH bool
	// Wrap, when set, is a command that runs rancher-machine: rancher-machine's path and arguments are appended to
	// it (e.g. one that gives it a mount namespace, as a pod gives its containers).
	Wrap []string
}

// Result is one run.
type Result struct {
	Args     []string
	Output   string // stdout and stderr, interleaved as a user sees them
	Stdout   string // stdout alone: what `ip` and `status` print
	Err      error
	Duration time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("rancher-machine %s: %v\n%s", strings.Join(r.Args, " "), r.Err, r.Output)
}

// Answer is the first line of stdout: what `ip` and `status` answer. rancher-machine relays the plugin's own
// "Closing plugin on server side" (rancher/machine's RegisterDriver logs it on its stdout) after it.
func (r Result) Answer() string {
	line, _, _ := strings.Cut(r.Stdout, "\n")
	return strings.TrimSpace(line)
}

// Run runs `rancher-machine --storage-path <store> args…`. onLine, when not nil, sees every output line as it
// arrives, with the time it arrived; when it returns true the run is stopped (rancher-machine and the plugin it
// started are killed as a process group) and Run returns what was seen, with a nil Err.
func (c *CLI) Run(ctx context.Context, onLine func(line string, at time.Time) (stop bool), args ...string) Result {
	full := append([]string{"--storage-path", c.Store}, args...)
	if c.NativeSSH {
		full = append([]string{"--native-ssh"}, full...)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	argv := append([]string{c.Bin}, full...)
	if len(c.Wrap) > 0 {
		argv = append(append([]string(nil), c.Wrap...), argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(cleanEnviron(), c.Env...)
	cmd.Env = append(cmd.Env, "PATH="+c.PluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Its own process group, so that stopping it stops the plugin it started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		return Result{Args: full, Err: err}
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		return Result{Args: full, Err: err}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{Args: full, Err: err}
	}
	var (
		mu             sync.Mutex
		output, stdout strings.Builder
		stopped        bool
		wg             sync.WaitGroup
	)
	read := func(r io.Reader, isStdout bool) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line, at := sc.Text(), time.Now()
			mu.Lock()
			output.WriteString(line + "\n")
			if isStdout {
				stdout.WriteString(line + "\n")
			}
			stop := !stopped && onLine != nil && onLine(line, at)
			if stop {
				stopped = true
			}
			mu.Unlock()
			if stop {
				cancel()
			}
		}
	}
	wg.Add(2)
	go read(stdoutPipe, true)
	go read(stderrPipe, false)
	wg.Wait()
	err = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if stopped {
		err = nil
	}
	return Result{Args: full, Output: output.String(), Stdout: stdout.String(), Err: err, Duration: time.Since(start)}
}

// cleanEnviron is this process's environment without rancher/machine's plugin variables: its RPC client
// factory sets them in the parent, and a rancher-machine that inherits them believes it is itself a plugin
// ("Unsupported driver").
func cleanEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MACHINE_PLUGIN_") {
			env = append(env, kv)
		}
	}
	return env
}

// PluginDir checks that plugin is named as rancher-machine looks it up and returns its directory.
func PluginDir(plugin string) (string, error) {
	abs, err := filepath.Abs(plugin)
	if err != nil {
		return "", err
	}
	if filepath.Base(abs) != "docker-machine-driver-harvester" {
		return "", fmt.Errorf("rancher-machine looks the plugin up as docker-machine-driver-harvester on $PATH, not %s", filepath.Base(abs))
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("no plugin binary (run make build): %w", err)
	}
	return filepath.Dir(abs), nil
}
