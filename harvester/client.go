package harvester

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

// api returns the driver's client, connecting with the machine's credential on first use.
func (d *Driver) api() (kube.Interface, error) {
	if d.clients != nil {
		return d.clients, nil
	}
	if d.credentialErr != nil {
		return nil, d.credentialErr
	}
	c, expiry, err := connect(d.kubeconfig, time.Now())
	if err != nil {
		return nil, err
	}
	d.clients, d.credentialExpiry = c, expiry
	return c, nil
}

// renewCredential tells a user whose credential Harvester rejected how to give a current one.
var renewCredential = fmt.Sprintf("Renew it: in Rancher, update the Harvester cloud credential (Cluster Management → Cloud Credentials); with rancher-machine, pass a current kubeconfig with --%s or $KUBECONFIG",
	config.FlagKubeconfigContent)

// connect returns a client for a Harvester kubeconfig (see restConfig), and the expiry of its token when the
// token says (see tokenExpiry); a rejected credential's errors give that expiry as of now.
func connect(kubeconfig []byte, now time.Time) (kube.Interface, time.Time, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, time.Time{}, err
	}
	expiry, _ := tokenExpiry(cfg.BearerToken)
	renew := renewCredential
	if note := expiryNote(expiry, now); note != "" {
		renew = note + ". " + renew
	}
	c, err := kube.NewForConfig(cfg, renew)
	if err != nil {
		return nil, time.Time{}, scrubNotFound(err)
	}
	return c, expiry, nil
}

// restConfig resolves the Harvester credential: the kubeconfig given (--harvester-kubeconfig-content, its
// environment variable, or a reference-driver machine's saved state), else the kubeconfig files of $KUBECONFIG /
// ~/.kube/config. In-cluster configuration is deliberately never used: inside Rancher's provisioning pod it
// would be Rancher's own cluster, not Harvester.
func restConfig(kubeconfig []byte) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if len(kubeconfig) > 0 {
		cfg, err = clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	} else {
		raw, loadErr := clientcmd.NewDefaultClientConfigLoadingRules().Load()
		if loadErr != nil {
			return nil, fmt.Errorf("cannot read the kubeconfig from $KUBECONFIG or ~/.kube/config: %v", scrubNotFound(loadErr))
		}
		if len(raw.Clusters) == 0 {
			return nil, fmt.Errorf("no Harvester credential: pass --%s (or set $%s), or point $KUBECONFIG at a Harvester kubeconfig",
				config.FlagKubeconfigContent, config.EnvVar(config.FlagKubeconfigContent))
		}
		cfg, err = clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("the Harvester kubeconfig is not usable: %v", scrubNotFound(err))
	}
	cfg.UserAgent = "docker-machine-driver-harvester/" + version.Version
	// One plugin process serves one machine; a create makes a few dozen requests at most, in bursts.
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}

// waitFor follows the machine's VM and VMI by watch (kube.Interface.WatchMachine) and calls check with each new
// snapshot until it is done or fails, or ctx ends; it returns the last snapshot seen.
func waitFor(ctx context.Context, c kube.Interface, ns, name string, recheck time.Duration, check func(snapshot) (bool, error)) (snapshot, error) {
	m, err := c.WatchMachine(ctx, ns, name, recheck, func(m kube.Machine) (bool, error) { return check(snapshot(m)) })
	return snapshot(m), err
}

var notFoundPhrase = regexp.MustCompile(`(?i)not\s+found`)

// scrubNotFound rewords "not found" in an error that is a real failure. rancher-machine's rm treats any Remove
// error containing "not found" (any case) as "already gone" and drops the machine — which would leak the VM when
// the real cause is, say, a kubeconfig context that does not exist.
func scrubNotFound(err error) error {
	if err == nil || !notFoundPhrase.MatchString(err.Error()) {
		return err
	}
	return errors.New(notFoundPhrase.ReplaceAllString(err.Error(), "missing"))
}
