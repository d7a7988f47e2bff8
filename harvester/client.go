package harvester

import (
	"context"
	"slices"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// api returns the driver's client, connecting with the machine's credential on first use (see
// connection.Connect).
func (d *Driver) api() (kube.Interface, error) {
	if d.clients == nil {
		if d.credentialErr != nil {
			return nil, d.credentialErr
		}
		c, expiry, err := connection.Connect(connection.Credential{Content: d.kubeconfig}, time.Now())
		if err != nil {
			return nil, err
		}
		d.clients, d.credentialExpiry = c, expiry
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

// waitFor follows the machine's VM and VMI by watch (kube.Interface.WatchMachine) and calls check with each new
// snapshot until it is done or fails, or ctx ends; it returns the last snapshot seen.
func waitFor(ctx context.Context, c kube.Interface, ns, name string, recheck time.Duration, check func(snapshot) (bool, error)) (snapshot, error) {
	m, err := c.WatchMachine(ctx, ns, name, recheck, func(m kube.Machine) (bool, error) { return check(snapshot(m)) })
	return snapshot(m), err
}
