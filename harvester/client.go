package harvester

import (
	"context"
	"slices"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// api returns the driver's client, connecting with the machine's credential on first use (see
// connection.Connect).
func (d *Driver) api() (kube.Interface, error) {
	if d.clients == nil {
		if d.credentialErr != nil {
			return nil, d.credentialErr
		}
		c, token, err := connection.Connect(connection.Credential{Content: d.kubeconfig}, time.Now())
		if err != nil {
			return nil, err
		}
		d.clients, d.token = c, token
	}
	d.holdSecrets(d.clients)
	return d.clients, nil
}

// holdSecrets holds the secrets of the machine's configuration in the client's screen (kube.Screen), before any
// request: no message of the cluster shows a run of them. The Secrets the client reads and writes it holds itself
// (the data Secrets, the cloud-init Secret, the guest account's token), the credential's secrets connection.Connect
// holds. The machine's own names are public there: the user data holds the machine's name as its hostname.
func (d *Driver) holdSecrets(c kube.Interface) {
	cfg := d.cfg
	if cfg == nil || d.heldIn == c {
		return
	}
	d.heldIn = c
	s := c.Screen()
	s.Hold(slices.Concat([][]byte{[]byte(cfg.SSH.Password), cfg.UserData, cfg.RancherUserData},
		connection.CredentialSecrets(cfg.CloudProvider.Kubeconfig))...)
	s.Allow(cfg.MachineName, cfg.Namespace, objects.CloudInitSecretName(cfg.MachineName), cfg.ClusterName)
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
