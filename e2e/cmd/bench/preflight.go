package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
)

// preflightRun is what the pre-flights of one plugin took: times and requests, one entry per run.
type preflightRun struct {
	took     []time.Duration
	requests []map[string]int
}

// measurePreflight times the PreCreateCheck alone of each plugin (the docker-machine-driver-harvester in each of
// pluginDirs: this driver's, and the reference driver's when given) over rancher/machine's RPC, n times each,
// taking turns so that both see the same load. Each run has a plugin started for it (a driver keeps what its
// pre-flight looked up, so a second check in one process would be cheaper than a create's): start,
// SetConfigFromFlags with every flag at its default and the machine's values (what rancher-machine sends,
// commands/create.go getDriverOpts), then PreCreateCheck — only that call is timed, and its requests counted by
// the proxy, which counts both drivers' (their User-Agent is the binary's name).
func measurePreflight(pluginDirs []string, proxy *countingProxy, kubeconfig []byte, values map[string]any, n int) ([]preflightRun, error) {
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
func preflightOnce(pluginDir string, proxy *countingProxy, kubeconfig []byte, values map[string]any, machine string) (time.Duration, map[string]int, error) {
	oldPath := os.Getenv("PATH")
	os.Setenv("PATH", pluginDir+string(os.PathListSeparator)+oldPath)
	defer os.Setenv("PATH", oldPath)
	raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: machine, StorePath: os.TempDir()})
	factory := rpcdriver.NewRPCClientDriverFactory()
	defer factory.Close()
	d, err := factory.NewRPCClientDriver("harvester", raw)
	if err != nil {
		return 0, nil, fmt.Errorf("starting the plugin in %s: %w", pluginDir, err)
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
		return 0, nil, fmt.Errorf("SetConfigFromFlags (plugin in %s): %w", pluginDir, err)
	}
	proxy.take()
	start := time.Now()
	err = d.PreCreateCheck()
	took := time.Since(start)
	requests := proxy.take()
	if err != nil {
		return 0, nil, fmt.Errorf("PreCreateCheck (plugin in %s): %w", pluginDir, err)
	}
	return took, requests, nil
}
