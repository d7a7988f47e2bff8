package harvester

import (
	"fmt"
	"net/url"

	"github.com/harvester/docker-machine-driver-harvester/internal/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kubevirtv1client "kubevirt.io/client-go/kubevirt/typed/core/v1"
)

// clients are the API clients the driver uses: KubeVirt's generated client for VMs and VMIs, and a dynamic
// client, viewed through typed resources (kube.go), for everything else. Tests fill it with fakes.
type clients struct {
	kubevirt kubevirtv1client.KubevirtV1Interface
	dynamic  dynamic.Interface
	server   string // API server host, for error messages
}

// api returns the driver's clients, building them from the credential on first use.
func (d *Driver) api() (*clients, error) {
	if d.clients != nil {
		return d.clients, nil
	}
	cfg, err := d.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	d.clients = c
	return c, nil
}

// restConfig resolves the Harvester credential: --harvester-kubeconfig-content (or its environment variable, or
// a reference-driver machine's saved state), else the kubeconfig files of $KUBECONFIG / ~/.kube/config.
// In-cluster configuration is deliberately never used: inside Rancher's provisioning pod it would be Rancher's
// own cluster, not Harvester.
func (d *Driver) restConfig() (*rest.Config, error) {
	if d.credentialErr != nil {
		return nil, d.credentialErr
	}
	var (
		cfg *rest.Config
		err error
	)
	if len(d.kubeconfig) > 0 {
		cfg, err = clientcmd.RESTConfigFromKubeConfig(d.kubeconfig)
	} else {
		raw, loadErr := clientcmd.NewDefaultClientConfigLoadingRules().Load()
		if loadErr != nil {
			return nil, fmt.Errorf("cannot read the kubeconfig from $KUBECONFIG or ~/.kube/config: %v", scrubNotFound(loadErr))
		}
		if len(raw.Clusters) == 0 {
			return nil, fmt.Errorf("no Harvester credential: pass --%s (or set $%s), or point $KUBECONFIG at a Harvester kubeconfig",
				FlagKubeconfigContent, envVar(FlagKubeconfigContent))
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

func newClients(cfg *rest.Config) (*clients, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the Harvester kubeconfig is not usable: %v", scrubNotFound(err))
	}
	c := &clients{server: cfg.Host}
	if u, err := url.Parse(cfg.Host); err == nil && u.Host != "" {
		c.server = u.Host + u.Path
	}
	// Both clients share one HTTP client and so one connection pool.
	if c.kubevirt, err = kubevirtv1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.dynamic, err = dynamic.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	return c, nil
}
