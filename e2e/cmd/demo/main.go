// Command demo runs the driver's main job on one machine: it starts a simulated Harvester (a real control
// plane with Harvester's and KubeVirt's CRDs and webhooks, a seeded cluster, KubeVirt's VirtualMachine controller
// and stand-ins for the other controllers), creates one
// machine through the real rancher-machine CLI the way Rancher does, shows what Harvester then holds, removes
// the machine and stops everything. `make demo` runs it.
//
// With -real-guest (`make demo REAL_GUEST=1`) the machine boots as a real Debian guest under qemu (package
// e2e/guest; minutes under software emulation), and the demo logs in over SSH with the key the driver generated.
//
//	demo [-plugin bin/docker-machine-driver-harvester] [-real-guest]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	plugin := flag.String("plugin", "bin/docker-machine-driver-harvester", "the plugin binary to run (make build)")
	realGuest := flag.Bool("real-guest", false, "boot the machine as a real Linux guest under qemu")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *plugin, *realGuest, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
