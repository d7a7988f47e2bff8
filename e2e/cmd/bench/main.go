// Command bench measures the driver on the simulated Harvester and prints the figures as a Markdown table
// (`make bench`). It asserts nothing: figures depend on the machine; tests elsewhere assert behaviour.
//
//	bench [-plugin bin/docker-machine-driver-harvester] [-cycles 20] [-concurrent 100,200] [-handshakes 10]
//	      [-preflights 20] [-preflight-latency 1ms] [-boot-cycles 3] [-lives-only] [-concurrent-only]
//	      [-reference-plugin PATH]
//
// What it measures, always through the real rancher-machine CLI driving the built plugin:
//   - ready detection: from the moment the stand-in reports the VMI's IP (seen by a watch of this program) to
//     the driver reporting the machine running (its "is running at" line);
//   - API requests per create + remove cycle, counted by a proxy in front of the API server that only the
//     plugin talks to;
//   - the requests of a machine's whole life when the VM takes 3 s to boot, call by call as rancher-machine's RPC
//     client makes them: through rancher-machine's create, ip and rm (a plugin each), and in one plugin over RPC
//     (PreCreateCheck, Create, GetState, GetIP, Remove; see lives.go) — alone with -lives-only;
//   - the pre-flight alone: PreCreateCheck over rancher/machine's RPC client, and with -reference-plugin the
//     reference driver's the same way, against the same simulated Harvester, on loopback and again with a
//     network's round trip added to each request;
//   - the plugin's start: RPC handshake latency and resident memory after it, over rancher/machine's own client;
//   - many machines created and removed at once (100, then 200): successes, per-machine driver overhead
//     (create time minus the stand-in's simulated boot) and remove time, the plugins' API requests per machine
//     beside one machine's created and removed alone (the cycles'), the machine's load meanwhile, objects left
//     behind (concurrent.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rancher/machine/libmachine/log"
)

func main() {
	var o options
	flag.StringVar(&o.plugin, "plugin", "bin/docker-machine-driver-harvester", "the plugin binary (make build)")
	flag.IntVar(&o.cycles, "cycles", 20, "sequential create + remove cycles for latency and request counts")
	o.concurrent = sizes{100, 200}
	flag.Var(&o.concurrent, "concurrent", "machines created and removed at once, a set for each count of this comma-separated list (0: none)")
	flag.IntVar(&o.handshakes, "handshakes", 10, "plugin starts to time")
	flag.IntVar(&o.preflights, "preflights", 20, "pre-flights (PreCreateCheck over RPC) to time, a plugin started for each")
	flag.DurationVar(&o.preflightLatency, "preflight-latency", time.Millisecond, "round trip added to each request of the second set of pre-flights (a Harvester across a LAN); 0 or less skips that set")
	flag.IntVar(&o.bootCycles, "boot-cycles", 3, "machine lives with a 3-second simulated boot, for the requests of a life: each through rancher-machine's create, ip and rm, and each in one plugin over RPC")
	flag.BoolVar(&o.livesOnly, "lives-only", false, "measure the requests of the machine lives alone (-boot-cycles of each kind) and print their rows")
	flag.BoolVar(&o.concurrentOnly, "concurrent-only", false, "measure the many-at-once sets alone (and -cycles machines one after the other, whose requests they are compared with) and print their rows")
	flag.StringVar(&o.referencePlugin, "reference-plugin", "", "the reference driver's binary (named docker-machine-driver-harvester), to time its pre-flight the same way")
	flag.Parse()
	// rancher/machine's RPC client relays the plugin's output through its logger: keep stdout for the table.
	log.SetOutWriter(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
