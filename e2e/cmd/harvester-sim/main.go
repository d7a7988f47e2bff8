// Command harvester-sim runs a simulated Harvester on this machine until interrupted: a real control plane
// (etcd, kube-apiserver, kube-controller-manager on 127.0.0.1), Harvester's and KubeVirt's CRDs, a seeded
// cluster (images, networks, key pairs, nodes in zones zone-a and zone-b) and the stand-in controllers that
// bring VirtualMachines to Running with an IP address.
//
//	harvester-sim [-kubeconfig FILE] [-ip-delay 2s] [-phase-delay 200ms] [-v]
//
// Standard output carries exactly two lines, for scripts: "kubeconfig: <path>" once the admin kubeconfig is
// written, then "ready" once everything runs. Progress and logs go to standard error. SIGINT or SIGTERM stops
// everything and removes every file it made, the kubeconfig included.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "harvester-sim:", err)
		os.Exit(1)
	}
}
