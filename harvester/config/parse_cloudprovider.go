package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudProvider reads the flags that put the guest cloud provider's kubeconfig into the guest. How they go
// with the rest of the configuration (the driver's credential, the cluster name) and with each other when one
// needs another are rules (validate_cloudprovider.go).
func parseCloudProvider(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	s := CloudProviderSetup{
		Generate: opts.Bool(FlagGenerateCloudProviderConfig),
		Server:   opts.String(FlagCloudProviderServer),
		DropIn:   opts.Bool(FlagCloudProviderDropIn) || opts.Bool(FlagCloudProviderForRKE2),
	}
	s.Distribution = parseDistribution(p, opts)
	if raw := opts.String(FlagCloudProviderConfig); raw != "" {
		cfg.given.cloudProviderConfig = true
		kubeconfig, _ := userdata.DecodeBase64OrPlain(raw, isKubeconfig)
		if err := checkKubeconfig(kubeconfig); err != nil {
			p.Addf(FlagCloudProviderConfig, "%v", err)
		} else {
			s.Kubeconfig = kubeconfig
		}
	}
	for _, f := range []string{FlagCloudProviderForRKE2, FlagCloudProviderDropIn} {
		if opts.Bool(f) {
			cfg.given.dropIn = append(cfg.given.dropIn, f)
		}
	}
	cfg.CloudProvider = s
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
