package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
)

// preflightRun is what the pre-flights of one plugin took: times and requests, one entry per run.
type preflightRun struct {
	took     []time.Duration
	requests []map[string]int
}

// preflightSet is one set of pre-flights: each plugin's runs (this driver's first) with latency added to each
// request.
type preflightSet struct {
	latency time.Duration
	runs    []preflightRun
}

// print writes the set's row. With the reference driver's runs, it also gives the ratio of the two drivers'
// times in the same turn: the turns see the same load, so the ratio varies less than either time.
func (s preflightSet) print(out io.Writer) {
	where := "on loopback"
	if s.latency > 0 {
		where = fmt.Sprintf("with %s added to each request, a Harvester across a LAN", s.latency)
	}
	figures := func(r preflightRun) string {
		return fmt.Sprintf("median %s, p95 %s; %d requests (%s)", ms1(percentile(r.took, 50)), ms1(percentile(r.took, 95)),
			medianTotal(r.requests), verbs(r.requests))
	}
	ref := "not measured (no -reference-plugin)"
	if len(s.runs) > 1 {
		ours, theirs := s.runs[0].took, s.runs[1].took
		ratios := make([]float64, len(ours))
		faster := 0
		for i := range ours {
			ratios[i] = float64(ours[i]) / float64(theirs[i])
			if ours[i] < theirs[i] {
				faster++
			}
		}
		ref = fmt.Sprintf("%s; this driver's time ÷ the reference's in the same turn: median %.2f (this driver faster in %d of %d turns)",
			figures(s.runs[1]), medianFloat(ratios), faster, len(ours))
	}
	fmt.Fprintf(out, "| Pre-flight alone, %s: PreCreateCheck over RPC (%d runs, a plugin started for each) | %s | %s |\n",
		where, len(s.runs[0].took), figures(s.runs[0]), ref)
}

// measurePreflight times the PreCreateCheck alone of each plugin (the docker-machine-driver-harvester in each of
// pluginDirs: this driver's, and the reference driver's when given) over rancher/machine's RPC, n times each,
// taking turns so that both see the same load. Each run has a plugin started for it (a driver keeps what its
// pre-flight looked up, so a second check in one process would be cheaper than a create's): start,
// SetConfigFromFlags with every flag at its default and the machine's values (what rancher-machine sends,
// commands/create.go getDriverOpts), then PreCreateCheck — only that call is timed, and its requests counted by
// the proxy, which counts both drivers' (their User-Agent is the binary's name).
func measurePreflight(pluginDirs []string, proxy *countproxy.Proxy, kubeconfig []byte, values map[string]any, n int) ([]preflightRun, error) {
	runs := make([]preflightRun, len(pluginDirs))
	for i := range n {
		for k, dir := range pluginDirs {
			took, requests, err := preflightOnce(dir, proxy, kubeconfig, values, fmt.Sprintf("preflight-%d", i))
			if err != nil {
				return nil, err
			}
			runs[k].took = append(runs[k].took, took)
			runs[k].requests = append(runs[k].requests, requests)
		}
	}
	return runs, nil
}

// preflightOnce starts the plugin in pluginDir for machine, configures it and times its PreCreateCheck.
func preflightOnce(pluginDir string, proxy *countproxy.Proxy, kubeconfig []byte, values map[string]any, machine string) (time.Duration, map[string]int, error) {
	d, stop, err := configuredPlugin(pluginDir, kubeconfig, values, machine, os.TempDir())
	if err != nil {
		return 0, nil, err
	}
	defer stop()
	proxy.Take()
	start := time.Now()
	err = d.PreCreateCheck()
	took := time.Since(start)
	requests := proxy.Take()
	if err != nil {
		return 0, nil, fmt.Errorf("PreCreateCheck (plugin in %s): %w", pluginDir, err)
	}
	return took, requests, nil
}

// configuredPlugin starts the plugin in pluginDir over rancher/machine's RPC client, for machine with its store
// under store, and sets its flags as rancher-machine's create does (commands/create.go getDriverOpts): every flag
// at its default, then the machine's values and the credential. stop closes the plugin.
func configuredPlugin(pluginDir string, kubeconfig []byte, values map[string]any, machine, store string) (d *rpcdriver.RPCClientDriver, stop func(), err error) {
	oldPath := os.Getenv("PATH")
	os.Setenv("PATH", pluginDir+string(os.PathListSeparator)+oldPath)
	defer os.Setenv("PATH", oldPath)
	raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: machine, StorePath: store})
	factory := rpcdriver.NewRPCClientDriverFactory()
	d, err = factory.NewRPCClientDriver("harvester", raw)
	if err != nil {
		factory.Close()
		return nil, nil, fmt.Errorf("starting the plugin in %s: %w", pluginDir, err)
	}
	opts := &rpcdriver.RPCFlags{Values: map[string]any{}}
	for _, f := range d.GetCreateFlags() {
		opts.Values[f.String()] = f.Default()
	}
	// rancher-machine adds its own swarm options (commands/create.go), which BaseDriver reads.
	opts.Values["swarm-master"], opts.Values["swarm-host"], opts.Values["swarm-discovery"] = false, "", ""
	for k, v := range values {
		opts.Values[k] = v
	}
	opts.Values["harvester-kubeconfig-content"] = base64.StdEncoding.EncodeToString(kubeconfig)
	if err := d.SetConfigFromFlags(opts); err != nil {
		factory.Close()
		return nil, nil, fmt.Errorf("SetConfigFromFlags (plugin in %s): %w", pluginDir, err)
	}
	return d, func() { factory.Close() }, nil
}
