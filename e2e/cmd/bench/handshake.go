package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
)

// measureHandshakes starts the plugin the way rancher-machine does (rancher/machine's RPC client factory: exec,
// address on the first stdout line, version check, heartbeat, SetConfigRaw) and reads the plugin's resident
// memory once it answers.
func measureHandshakes(pluginDir string, n int, rep *report) error {
	fmt.Fprintf(os.Stderr, "bench: %d plugin starts\n", n)
	os.Setenv("PATH", pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	raw, _ := json.Marshal(&drivers.BaseDriver{MachineName: "handshake", StorePath: os.TempDir()})
	for range n {
		factory := rpcdriver.NewRPCClientDriverFactory()
		start := time.Now()
		d, err := factory.NewRPCClientDriver("harvester", raw)
		elapsed := time.Since(start)
		if err != nil {
			factory.Close()
			return fmt.Errorf("starting the plugin: %w", err)
		}
		if name := d.DriverName(); name != "harvester" {
			factory.Close()
			return fmt.Errorf("the plugin says it is %q", name)
		}
		rss, err := pluginRSS()
		factory.Close()
		if err != nil {
			return err
		}
		rep.handshake = append(rep.handshake, elapsed)
		rep.rssMB = append(rep.rssMB, rss)
	}
	return nil
}

// pluginRSS finds this process's docker-machine-driver-harvester child and returns its VmRSS in MB.
func pluginRSS() (float64, error) {
	self := strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		if err != nil || filepath.Base(exe) != "docker-machine-driver-harvester" {
			continue
		}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		var ppid, rssKB string
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rssKB = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			}
		}
		if ppid != self {
			continue
		}
		kb, err := strconv.ParseFloat(rssKB, 64)
		if err != nil {
			return 0, fmt.Errorf("reading the plugin's memory: %q", rssKB)
		}
		return kb / 1024, nil
	}
	return 0, fmt.Errorf("the plugin process was not found under /proc")
}
