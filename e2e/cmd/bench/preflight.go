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

// measurePreflight times the plugin's PreCreateCheck alone over rancher/machine's RPC, n times, each in a plugin
// started for it (a driver keeps what its pre-flight looked up, so a second check in one process would be
// cheaper than a create's): start, SetConfigFromFlags with every flag at its default and the machine's values
// (what rancher-machine sends, commands/create.go getDriverOpts), then PreCreateCheck — only that call is timed.
// The plugin is the docker-machine-driver-harvester in pluginDir, so the same code measures the reference driver;
// its requests are counted by the proxy, which counts both (their User-Agent is the binary's name).
func measurePreflight(pluginDir string, proxy *countingProxy, kubeconfig []byte, values map[string]any, n int) ([]time.Duration, []map[string]int, error) {
	oldPath := os.Getenv("PATH")
	os.Setenv("PATH", pluginDir+string(os.PathListSeparator)+oldPath)
	defer os.Setenv("PATH", oldPath)
	var took []time.Duration
	var requests []map[string]int
	for i := range n {
		raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: fmt.Sprintf("preflight-%d", i), StorePath: os.TempDir()})
		factory := rpcdriver.NewRPCClientDriverFactory()
		d, err := factory.NewRPCClientDriver("harvester", raw)
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
		proxy.take()
		start := time.Now()
		err = d.PreCreateCheck()
		elapsed := time.Since(start)
		requests = append(requests, proxy.take())
		factory.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("PreCreateCheck (plugin in %s): %w", pluginDir, err)
		}
		took = append(took, elapsed)
	}
	return took, requests, nil
}
