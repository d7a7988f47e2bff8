package config

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudProvider reads the flags that put the guest cloud provider's kubeconfig into the guest.
func parseCloudProvider(p *Problems, opts drivers.DriverOptions, cfg *Config) CloudProviderSetup {
	s := CloudProviderSetup{
		Generate: opts.Bool(FlagGenerateCloudProviderConfig),
		Server:   opts.String(FlagCloudProviderServer),
		DropIn:   opts.Bool(FlagCloudProviderDropIn) || opts.Bool(FlagCloudProviderForRKE2),
	}
	s.Distribution = parseDistribution(p, opts)
	if raw := opts.String(FlagCloudProviderConfig); raw != "" {
		s.Kubeconfig, _ = userdata.DecodeBase64OrPlain(raw, isKubeconfig)
		if err := checkGuestKubeconfig(s.Kubeconfig, cfg.Kubeconfig); err != nil {
			p.Addf(FlagCloudProviderConfig, "%v", err)
			s.Kubeconfig = nil
		}
		if s.Generate {
			p.Addf(FlagGenerateCloudProviderConfig, "give either --%s or --%s, not both", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
		}
	}
	if s.Generate && cfg.ClusterName == "" {
		p.Addf(FlagGenerateCloudProviderConfig, "needs --%s: the service account is the guest cluster's, named after it", FlagClusterName)
	}
	if s.Server != "" {
		if !s.Generate {
			p.Addf(FlagCloudProviderServer, "is only used with --%s", FlagGenerateCloudProviderConfig)
		} else if err := CheckGuestServer(s.Server); err != nil {
			p.Addf(FlagCloudProviderServer, "%v", err)
		}
	}
	if !s.Generate && opts.String(FlagCloudProviderConfig) == "" {
		for _, f := range []string{FlagCloudProviderForRKE2, FlagCloudProviderDropIn} {
			if opts.Bool(f) {
				p.Addf(f, "needs --%s or --%s: the drop-in turns on the cloud provider that reads that kubeconfig", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
			}
		}
		if s.Distribution != Distributions[DefaultDistribution] {
			p.Addf(FlagCloudProviderDistribution, "is only used with --%s or --%s: it says where that kubeconfig goes", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
		}
	}
	return s
}

// parseDistribution reads --harvester-cloud-provider-distribution (empty: RKE2, as Rancher's form may send it).
func parseDistribution(p *Problems, opts drivers.DriverOptions) Distribution {
	name := strings.ToLower(strings.TrimSpace(opts.String(FlagCloudProviderDistribution)))
	if name == "" {
		name = DefaultDistribution
	}
	dist, err := LookupDistribution(name)
	if err != nil {
		p.Addf(FlagCloudProviderDistribution, "%v", err)
		return Distributions[DefaultDistribution]
	}
	if name != "rke2" && opts.Bool(FlagCloudProviderForRKE2) {
		p.Addf(FlagCloudProviderForRKE2, "writes RKE2's drop-in, but the distribution is %s: use --%s instead", name, FlagCloudProviderDropIn)
	}
	return dist
}

// checkGuestKubeconfig makes sure a kubeconfig can go into a guest: usable, addressed to Harvester itself (a
// Rancher proxy URL does not accept a Harvester service account's token), and not the driver's own credential —
// every workload of the guest cluster could read that from the node.
func checkGuestKubeconfig(data, credential []byte) error {
	if err := checkKubeconfig(data); err != nil {
		return err
	}
	if len(credential) > 0 && bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(credential)) {
		return fmt.Errorf("is the Harvester credential of the driver itself; give the guest a scoped kubeconfig (docker-machine-driver-harvester cloud-provider-config makes one) or use --%s", FlagGenerateCloudProviderConfig)
	}
	cfg, _ := clientcmd.Load(data)
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return err
	}
	if err := CheckGuestServer(rest.Host); err != nil {
		return fmt.Errorf("its %v", err)
	}
	return nil
}

func CheckGuestServer(server string) error {
	u, err := url.Parse(server)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("server %q must be an https URL like https://<Harvester VIP>:6443", server)
	case strings.Contains(u.Path, "/k8s/clusters/"):
		return fmt.Errorf("server %q is a Rancher proxy URL; the guests need Harvester's own address, https://<Harvester VIP>:6443", server)
	}
	return nil
}
