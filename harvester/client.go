package harvester

import (
	"context"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
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
	c, token, err := connection.Connect(connection.Credential{Content: d.kubeconfig}, time.Now())
	if err != nil {
		return nil, err
	}
	d.clients, d.token = c, token
	return c, nil
}

// expiryReader tells when the credential's token expires (connection.Token).
type expiryReader interface {
	Expiry(ctx context.Context) (connection.Expiry, error)
}

// credentialExpiry is what is known of when the credential's token expires (see connection.Token): for a Rancher
// token, Rancher is asked the first time. A failed read is logged at debug level and tells nothing: it is no
// problem of the machine's.
func (d *Driver) credentialExpiry(ctx context.Context) connection.Expiry {
	if d.token == nil {
		return connection.Expiry{}
	}
	e, err := d.token.Expiry(ctx)
	if err != nil {
		logging.Debugf("Cannot tell when the Harvester credential expires: %v", err)
	}
	return e
}

// waitFor follows the machine's VM and VMI by watch (kube.Interface.WatchMachine) and calls check with each new
// snapshot until it is done or fails, or ctx ends; it returns the last snapshot seen.
func waitFor(ctx context.Context, c kube.Interface, ns, name string, recheck time.Duration, check func(snapshot) (bool, error)) (snapshot, error) {
	m, err := c.WatchMachine(ctx, ns, name, recheck, func(m kube.Machine) (bool, error) { return check(snapshot(m)) })
	return snapshot(m), err
}
