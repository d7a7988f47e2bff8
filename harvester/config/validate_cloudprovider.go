package config

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The rules of the cloud-provider flags (see parseCloudProvider): with the driver's credential and the cluster
// name, and between the flags where one needs another.

// guestKubeconfigIsScoped makes sure the kubeconfig given for the guest (one that parsed) can go into it:
// not carrying the driver's own credential — every workload of the guest cluster could read that from the node —
// and addressed to Harvester itself (a Rancher proxy URL does not accept a Harvester service account's token).
// The driver's credential is told first: it is the one to fix even when the address is wrong too.
func guestKubeconfigIsScoped(p *Problems, cfg *Config) {
	guest := cfg.CloudProvider.Kubeconfig
	if len(guest) == 0 {
		return
	}
	parsed, err := LoadContentKubeconfig(guest) // as parseCloudProvider read it
	if err != nil {
		p.Addf(FlagCloudProviderConfig, "%v", err)
		return
	}
	if len(cfg.Kubeconfig) > 0 {
		if own, err := LoadContentKubeconfig(cfg.Kubeconfig); err == nil {
			if user, what := sharedCredential(parsed.All, own.All); user != "" {
				p.Addf(FlagCloudProviderConfig, "is the Harvester credential of the driver itself (its user %q holds the same %s); give the guest a scoped kubeconfig (docker-machine-driver-harvester cloud-provider-config makes one) or use --%s",
					user, what, FlagGenerateCloudProviderConfig)
				return
			}
		}
	}
	rest, err := parsed.RESTConfig()
	if err != nil {
		p.Addf(FlagCloudProviderConfig, "%v", err)
		return
	}
	if err := CheckGuestServer(rest.Host); err != nil {
		p.Addf(FlagCloudProviderConfig, "its %v", err)
	}
}

// givenOrGenerated: the guest's kubeconfig is either given or made at create, not both.
func givenOrGenerated(p *Problems, cfg *Config) {
	if cfg.given.cloudProviderConfig && cfg.CloudProvider.Generate {
		p.Addf(FlagGenerateCloudProviderConfig, "give either --%s or --%s, not both", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
	}
}

// generatedAccountNamed: the account made at create is the guest cluster's, named after it.
func generatedAccountNamed(p *Problems, cfg *Config) {
	switch {
	case !cfg.CloudProvider.Generate:
	case cfg.ClusterName == "":
		p.Addf(FlagGenerateCloudProviderConfig, "needs --%s: the service account is the guest cluster's, named after it", FlagClusterName)
	default:
		if err := CheckGuestClusterName(cfg.ClusterName); err != nil {
			p.Addf(FlagClusterName, "%v (with --%s)", err, FlagGenerateCloudProviderConfig)
		}
	}
}

// serverForGenerated: --harvester-cloud-provider-server addresses the kubeconfig made at create.
func serverForGenerated(p *Problems, cfg *Config) {
	switch s := cfg.CloudProvider; {
	case s.Server == "":
	case !s.Generate:
		p.Addf(FlagCloudProviderServer, "is only used with --%s", FlagGenerateCloudProviderConfig)
	default:
		if err := CheckGuestServer(s.Server); err != nil {
			p.Addf(FlagCloudProviderServer, "%v", err)
		}
	}
}

// dropInNeedsKubeconfig: the drop-in and the distribution say what to do with the guest's kubeconfig, and
// there must be one.
func dropInNeedsKubeconfig(p *Problems, cfg *Config) {
	if cfg.CloudProvider.Generate || cfg.given.cloudProviderConfig {
		return
	}
	for _, f := range cfg.given.dropIn {
		p.Addf(f, "needs --%s or --%s: the drop-in turns on the cloud provider that reads that kubeconfig", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
	}
	if cfg.CloudProvider.Distribution != Distributions[DefaultDistribution] {
		p.Addf(FlagCloudProviderDistribution, "is only used with --%s or --%s: it says where that kubeconfig goes", FlagCloudProviderConfig, FlagGenerateCloudProviderConfig)
	}
}

// sharedCredential returns the name of a user of guest that authenticates as one of own's users and what they
// share (see sharedWhat), or "" and "". The
// whole file goes into the guest, so every user in it counts, not only the current context's. Identity is
// judged on what the server authenticates (a token, a client certificate, a user name and password, an exec or
// auth-provider plugin), as parsed: the same credential written another way (quoted differently, in another
// context or under another name, addressed to another server name) is still the same credential.
func sharedCredential(guest, own *clientcmdapi.Config) (user, what string) {
	names := make([]string, 0, len(guest.AuthInfos))
	for name := range guest.AuthInfos {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if what := sharedWhat(guest.AuthInfos[name], own); what != "" {
			return name, what
		}
	}
	return "", ""
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
