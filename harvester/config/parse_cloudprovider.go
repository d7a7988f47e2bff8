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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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
	if s.Generate && cfg.ClusterName != "" {
		if err := CheckGuestClusterName(cfg.ClusterName); err != nil {
			p.Addf(FlagClusterName, "%v (with --%s)", err, FlagGenerateCloudProviderConfig)
		}
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

// The guest cluster's cloud-provider account is named after the cluster, with a suffix that keeps it apart from
// the account Harvester's own kubeconfig endpoint makes for the same cluster (named after the cluster alone, and
// bound cluster-wide to harvesterhci.io:csi-driver: pkg/api/kubeconfig/generate_handler.go). Its token Secret adds
// cloudProviderTokenSuffix.
const (
	cloudProviderAccountSuffix = "-cloud-provider"
	cloudProviderTokenSuffix   = "-token"
)

// CloudProviderAccountName names the ServiceAccount the driver makes for guest cluster cluster.
func CloudProviderAccountName(cluster string) string { return cluster + cloudProviderAccountSuffix }

// CloudProviderTokenName names the token Secret of service account account.
func CloudProviderTokenName(account string) string { return account + cloudProviderTokenSuffix }

// CheckGuestClusterName refuses a guest cluster name the driver cannot name the cluster's cloud-provider account
// after: the account and its token Secret must be DNS-1123 subdomains, and `default` is refused.
func CheckGuestClusterName(cluster string) error {
	if cluster == corev1.NamespaceDefault {
		return fmt.Errorf("%q is refused: every namespace has a ServiceAccount of that name, which all its pods run as, and the guest cluster's account must not be mistaken for it; give the guest cluster another name", cluster)
	}
	long := len(cloudProviderAccountSuffix) + len(cloudProviderTokenSuffix)
	if len(validation.IsDNS1123Subdomain(cluster)) > 0 || len(validation.IsDNS1123Subdomain(CloudProviderTokenName(CloudProviderAccountName(cluster)))) > 0 {
		return fmt.Errorf("%q cannot name the guest cluster's ServiceAccount %s: it must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit) of at most %d characters",
			cluster, CloudProviderAccountName(cluster), validation.DNS1123SubdomainMaxLength-long)
	}
	return nil
}

// CheckCloudProviderAccountName refuses a ServiceAccount name given for a guest cluster's cloud-provider account:
// not a DNS-1123 subdomain (with its token Secret's suffix), or `default`, the namespace's own account.
func CheckCloudProviderAccountName(account string) error {
	if account == corev1.NamespaceDefault {
		return fmt.Errorf("%q is refused: it is the namespace's own ServiceAccount, which every pod there runs as", account)
	}
	if len(validation.IsDNS1123Subdomain(account)) > 0 || len(validation.IsDNS1123Subdomain(CloudProviderTokenName(account))) > 0 {
		return fmt.Errorf("%q is not a valid ServiceAccount name: it must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit) of at most %d characters",
			account, validation.DNS1123SubdomainMaxLength-len(cloudProviderTokenSuffix))
	}
	return nil
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
			if user, what := sharedCredential(cfg, own); user != "" {
				return fmt.Errorf("is the Harvester credential of the driver itself (its user %q holds the same %s); give the guest a scoped kubeconfig (docker-machine-driver-harvester cloud-provider-config makes one) or use --%s",
					user, what, FlagGenerateCloudProviderConfig)
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
