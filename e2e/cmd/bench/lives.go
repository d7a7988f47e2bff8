package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/state"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
)

// A machine's life is measured the two ways rancher-machine's RPC client drives the plugin through it:
//
//   - its commands, each starting a plugin of its own from the saved state: `create` (rancher/machine
//     libmachine.go Create: PreCreateCheck, the state saved, Create, saved again, then GetState until Running —
//     with --custom-install-script and a driver with a user-data flag it provisions nothing over SSH), `ip`
//     (GetIP) and `rm -y` (commands/rm.go removeRemoteMachine: Remove);
//   - the same calls in one plugin process, one after the other: PreCreateCheck, Create, GetState, GetIP, Remove.
//
// Either way the counting proxy counts the plugin's requests, step by step.

// lifeStep is the requests of one step of a life: a command, or a call over RPC.
type lifeStep struct {
	name     string
	requests map[string]int
}

// lifeSet is the lives measured one way.
type lifeSet struct {
	how   string
	lives [][]lifeStep
}

// measureLives lives n machines each way in namespace ns (whose VMs take bootTime to boot).
func measureLives(ctx context.Context, proxy *countproxy.Proxy, cli *rmachine.CLI, pluginDir string, kubeconfig []byte,
	createArgs func(string) []string, ns, work string, n int, rep *report) error {
	fmt.Fprintf(os.Stderr, "bench: %d machine lives with a %s boot through rancher-machine's commands, and %d in one plugin over RPC\n", n, bootTime, n)
	commands := lifeSet{how: "through rancher-machine, a plugin per command: create, ip, rm"}
	rpc := lifeSet{how: "in one plugin over RPC: PreCreateCheck, Create, GetState, GetIP, Remove"}
	for i := range n {
		life, err := commandLife(ctx, proxy, cli, createArgs, fmt.Sprintf("slow-%d", i))
		if err != nil {
			return err
		}
		commands.lives = append(commands.lives, life)
		values := map[string]any{"harvester-vm-namespace": ns, "harvester-image-name": "default/ubuntu-22.04",
			"harvester-disk-size": 10, "harvester-network-name": "default/vm-untag"}
		if life, err = rpcLife(proxy, pluginDir, kubeconfig, values, fmt.Sprintf("rpc-%d", i), filepath.Join(work, "rpc")); err != nil {
			return err
		}
		rpc.lives = append(rpc.lives, life)
	}
	rep.lives = []lifeSet{commands, rpc}
	return nil
}

// commandLife creates machine name with rancher-machine, asks its IP and removes it.
func commandLife(ctx context.Context, proxy *countproxy.Proxy, cli *rmachine.CLI, createArgs func(string) []string, name string) ([]lifeStep, error) {
	proxy.Take()
	var life []lifeStep
	for _, args := range [][]string{createArgs(name), {"ip", name}, {"rm", "-y", name}} {
		r := cli.Run(ctx, nil, args...)
		if r.Err != nil {
			return nil, fmt.Errorf("%s", r)
		}
		if args[0] == "create" && r.Duration < bootTime {
			return nil, fmt.Errorf("create %s took %s, less than the %s boot: the ip-delay knob did not apply", name, r.Duration, bootTime)
		}
		life = append(life, lifeStep{args[0], proxy.Take()})
	}
	return life, nil
}

// rpcLife runs machine name's life in one plugin started over rancher/machine's RPC client, making the calls
// rancher-machine's create, ip and rm make, in their order (the state saves, GetConfigRaw, included).
func rpcLife(proxy *countproxy.Proxy, pluginDir string, kubeconfig []byte, values map[string]any, name, store string) ([]lifeStep, error) {
	d, stop, err := configuredPlugin(pluginDir, kubeconfig, values, name, store)
	if err != nil {
		return nil, err
	}
	defer stop()
	proxy.Take()
	var life []lifeStep
	var created time.Duration
	for _, call := range []struct {
		name string
		run  func() error
	}{
		{"PreCreateCheck", func() error {
			if err := d.PreCreateCheck(); err != nil {
				return err
			}
			_, err := d.GetConfigRaw()
			return err
		}},
		{"Create", func() error {
			start := time.Now()
			err := d.Create()
			created = time.Since(start)
			if err != nil {
				return err
			}
			_, err = d.GetConfigRaw()
			return err
		}},
		{"GetState", func() error {
			if s, err := d.GetState(); err != nil || s != state.Running {
				return fmt.Errorf("state %s, %v", s, err)
			}
			return nil
		}},
		{"GetIP", func() error { _, err := d.GetIP(); return err }},
		{"Remove", d.Remove},
	} {
		if err := call.run(); err != nil {
			return nil, fmt.Errorf("machine %s, %s over RPC: %w", name, call.name, err)
		}
		life = append(life, lifeStep{call.name, proxy.Take()})
	}
	if created < bootTime {
		return nil, fmt.Errorf("Create of %s took %s, less than the %s boot: the ip-delay knob did not apply", name, created, bootTime)
	}
	return life, nil
}

// print writes the set's row: the median life in all and by verb, and each step's median.
func (s lifeSet) print(out io.Writer) {
	var totals []map[string]int
	var steps []string
	for i, life := range s.lives {
		all := map[string]int{}
		for _, step := range life {
			for v, k := range step.requests {
				all[v] += k
			}
		}
		totals = append(totals, all)
		if i == 0 {
			for k, step := range life {
				var each []map[string]int
				for _, other := range s.lives {
					each = append(each, other[k].requests)
				}
				steps = append(steps, fmt.Sprintf("%s %d", step.name, medianTotal(each)))
			}
		}
	}
	fmt.Fprintf(out, "| API requests of a machine's life %s, with a %s boot (%d lives; median, by verb) | %d (%s; by step: %s) | |\n",
		s.how, bootTime.Round(time.Second), len(s.lives), medianTotal(totals), verbs(totals), strings.Join(steps, ", "))
}
