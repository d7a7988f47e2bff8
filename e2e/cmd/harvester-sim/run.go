package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// run starts the simulated Harvester, reports on stdout, and stops it when ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harvester-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "also write the admin kubeconfig to this file (removed on exit)")
	var so standin.Options
	fs.DurationVar(&so.PhaseDelay, "phase-delay", 200*time.Millisecond, "time per step of a VMI's start (launcher Pod bound, Pod running, VMI Running)")
	fs.DurationVar(&so.IPDelay, "ip-delay", 2*time.Second, "time from Running until the guest agent reports addresses")
	fs.DurationVar(&so.BindDelay, "bind-delay", 200*time.Millisecond, "time until a new PVC is Bound")
	verbose := fs.Bool("v", false, "log what the stand-in controllers do")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	if *verbose {
		so.Logf = logf
	} else {
		so.Logf = func(string, ...any) {}
	}

	t0 := time.Now()
	bed, err := testbed.Start(ctx, testbed.Options{StandIn: so, Logf: logf})
	if err != nil {
		return err
	}
	defer bed.Stop()

	path := bed.KubeconfigPath
	if *kubeconfig != "" {
		if path, err = writeAtomic(*kubeconfig, bed.AdminKubeconfig()); err != nil {
			return err
		}
		defer os.Remove(path)
	}
	fmt.Fprintf(stdout, "kubeconfig: %s\n", path)
	fmt.Fprintln(stdout, "ready")
	logf("harvester-sim: ready after %v: API %s; stop with Ctrl-C", time.Since(t0).Round(time.Millisecond), bed.ControlPlane.URL())
	<-ctx.Done()
	logf("harvester-sim: stopping")
	return nil
}

// writeAtomic writes data to path through a temporary file and a rename, so a script polling for the file
// never reads half of it. It returns the absolute path.
func writeAtomic(path string, data []byte) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	tmp := abs + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", err
	}
	return abs, os.Rename(tmp, abs)
}
