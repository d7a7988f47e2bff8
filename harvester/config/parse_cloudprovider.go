package config

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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
// Rancher proxy URL does not accept a Harvester service account's token), and not carrying the driver's own
// credential — every workload of the guest cluster could read that from the node.
func checkGuestKubeconfig(data, credential []byte) error {
	if err := checkKubeconfig(data); err != nil {
		return err
	}
	cfg, _ := clientcmd.Load(data)
	if len(credential) > 0 {
		if own, err := clientcmd.Load(credential); err == nil {
			if user := sharedCredential(cfg, own); user != "" {
				return fmt.Errorf("is the Harvester credential of the driver itself (its user %q holds the same %s); give the guest a scoped kubeconfig (docker-machine-driver-harvester cloud-provider-config makes one) or use --%s",
					user, sharedWhat(cfg.AuthInfos[user], own), FlagGenerateCloudProviderConfig)
			}
		}
	}
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return err
	}
	if err := CheckGuestServer(rest.Host); err != nil {
		return fmt.Errorf("its %v", err)
	}
	return nil
}

// sharedCredential returns the name of a user of guest that authenticates as one of own's users, or "". The
// whole file goes into the guest, so every user in it counts, not only the current context's. Identity is
// judged on what the server authenticates (a token, a client certificate, a user name and password, an exec or
// auth-provider plugin), as parsed: the same credential written another way (quoted differently, in another
// context or under another name, addressed to another server name) is still the same credential.
func sharedCredential(guest, own *clientcmdapi.Config) string {
	names := make([]string, 0, len(guest.AuthInfos))
	for name := range guest.AuthInfos {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if sharedWhat(guest.AuthInfos[name], own) != "" {
			return name
		}
	}
	return ""
}

// sharedWhat names the credential a guest user shares with one of own's users ("token", "client certificate",
// …), or "".
func sharedWhat(a *clientcmdapi.AuthInfo, own *clientcmdapi.Config) string {
	if a == nil {
		return ""
	}
	for _, b := range own.AuthInfos {
		if b == nil {
			continue
		}
		switch {
		case sameText(a.Token, b.Token):
			return "token"
		case sameText(a.TokenFile, b.TokenFile):
			return "token file"
		case len(bytes.TrimSpace(a.ClientCertificateData)) > 0 && bytes.Equal(bytes.TrimSpace(a.ClientCertificateData), bytes.TrimSpace(b.ClientCertificateData)):
			return "client certificate"
		case len(bytes.TrimSpace(a.ClientKeyData)) > 0 && bytes.Equal(bytes.TrimSpace(a.ClientKeyData), bytes.TrimSpace(b.ClientKeyData)):
			return "client key"
		case sameText(a.ClientKey, b.ClientKey):
			return "client key file"
		case sameText(a.Username, b.Username) && a.Password == b.Password:
			return "user name and password"
		case a.Exec != nil && b.Exec != nil && a.Exec.Command == b.Exec.Command && slices.Equal(a.Exec.Args, b.Exec.Args):
			return "exec credential plugin"
		case a.AuthProvider != nil && b.AuthProvider != nil && a.AuthProvider.Name == b.AuthProvider.Name && maps.Equal(a.AuthProvider.Config, b.AuthProvider.Config):
			return "auth-provider plugin"
		}
	}
	return ""
}

// sameText reports whether two non-empty credential strings are equal, blanks around them aside.
func sameText(a, b string) bool {
	a = strings.TrimSpace(a)
	return a != "" && a == strings.TrimSpace(b)
}

// CheckGuestServer makes sure server is an address the guests can reach Harvester's API at. Errors show the URL
// without its user information (user:password@), which may be a credential.
func CheckGuestServer(server string) error {
	u, err := url.Parse(server)
	if err != nil {
		return fmt.Errorf("server must be an https URL like https://<Harvester VIP>:6443 (the value is not a URL; not shown: it may hold a secret)")
	}
	shown := *u
	shown.User = nil
	switch {
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("server %q must be an https URL like https://<Harvester VIP>:6443", shown.String())
	case u.User != nil:
		return fmt.Errorf("server %q carries a user name or password in the URL; give the address alone, https://<Harvester VIP>:6443", shown.String())
	case strings.Contains(u.Path, "/k8s/clusters/"):
		return fmt.Errorf("server %q is a Rancher proxy URL; the guests need Harvester's own address, https://<Harvester VIP>:6443", shown.String())
	}
	return nil
}
