package harvester

import (
	"context"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// api returns the driver's client, connecting with the machine's credential on first use (see
// connection.Connect).
func (d *Driver) api() (kube.Interface, error) {
	if d.clients != nil {
		return d.clients, nil
	}
	if d.credentialErr != nil {
		return nil, d.credentialErr
	}
	c, expiry, err := connection.Connect(connection.Credential{Content: d.kubeconfig}, time.Now())
	if err != nil {
		return nil, err
	}
	d.clients, d.credentialExpiry = c, expiry
	return c, nil
}

// waitFor follows the machine's VM and VMI by watch (kube.Interface.WatchMachine) and calls check with each new
// snapshot until it is done or fails, or ctx ends; it returns the last snapshot seen.
func waitFor(ctx context.Context, c kube.Interface, ns, name string, recheck time.Duration, check func(snapshot) (bool, error)) (snapshot, error) {
	m, err := c.WatchMachine(ctx, ns, name, recheck, func(m kube.Machine) (bool, error) { return check(snapshot(m)) })
	return snapshot(m), err
}
