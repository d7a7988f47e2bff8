package harvester

import (
	"bytes"
	"fmt"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudProvider reads the flags that put the guest cloud provider's kubeconfig into the guest.
func parseCloudProvider(p *problems, opts drivers.DriverOptions, cfg *Config) CloudProviderSetup {
	s := CloudProviderSetup{
		Generate: opts.Bool(FlagGenerateCloudProviderConfig),
		Server:   opts.String(FlagCloudProviderServer),
		ForRKE2:  opts.Bool(FlagCloudProviderForRKE2),
	}
	if raw := opts.String(FlagCloudProviderConfig); raw != "" {
		s.Kubeconfig, _ = userdata.DecodeBase64OrPlain(raw, isKubeconfig)
		if err := checkGuestKubeconfig(s.Kubeconfig, cfg.Kubeconfig); err != nil {
			p.addf(FlagCloudProviderConfig, "%v", err)
			s.Kubeconfig = nil
		}
		if s.Generate {
			p.addf(FlagGenerateCloudProviderConfig, "give either --%s or --%s, not both", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
		}
	}
	if s.Generate && cfg.ClusterName == "" {
		p.addf(FlagGenerateCloudProviderConfig, "needs --%s: the service account is the guest cluster's, named after it", FlagClusterName)
	}
	if s.Server != "" {
		if !s.Generate {
			p.addf(FlagCloudProviderServer, "is only used with --%s", FlagGenerateCloudProviderConfig)
		} else if err := checkGuestServer(s.Server); err != nil {
			p.addf(FlagCloudProviderServer, "%v", err)
		}
	}
	if s.ForRKE2 && !s.Generate && opts.String(FlagCloudProviderConfig) == "" {
		p.addf(FlagCloudProviderForRKE2, "needs --%s or --%s: the drop-in points RKE2 at that kubeconfig", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
	}
	return s
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
	if err := checkGuestServer(rest.Host); err != nil {
		return fmt.Errorf("its %v", err)
	}
	return nil
}
