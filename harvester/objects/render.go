package objects

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// placeholderSSHKey stands for the machine's SSH key, which only a create makes.
const placeholderSSHKey = "<public key of the SSH key pair generated at create>"

// classPlaceholder stands for the storage class of an image until the pre-flight has read it (Build).
func classPlaceholder(image config.Ref) string { return classPlaceholderPrefix + image.String() + ">" }

// classPlaceholderPrefix begins every classPlaceholder.
const classPlaceholderPrefix = "<storage class of image "

// Render returns the cloud-init Secret and the VirtualMachine a create of m, a machine as Build makes it, would
// send, as YAML. Facts only a create learns (each image's storage class, the claim name suffix, the generated SSH
// key) are placeholders; a pool's address is each range's first (AddressPlan.First, with a comment in the network
// data). Render reads no cluster: user data or network data kept in a Secret (--harvester-user-data-secret,
// --harvester-network-data-secret) is a placeholder naming the Secret, where the create puts what it reads there
// (secretPlaceholders). The Secret shows its data as stringData, so the user data a node will boot with can be
// read as is.
func Render(m *Machine) ([]byte, error) {
	cfg := m.cfg
	guestKubeconfig := cfg.CloudProvider.Kubeconfig
	if cfg.CloudProvider.Generate {
		guestKubeconfig = GeneratedKubeconfigPlaceholder(cfg)
	}
	var addrs []*StaticAddress
	if m.Addresses != nil {
		addrs = m.Addresses.First()
	}
	network, err := renderNetworkData(cfg.NetworkData, m.Addresses, addrs)
	if m.Lease != nil {
		network, err = leaseNetworkData(cfg.NetworkData, m.LeaseMAC())
		network = append([]byte(leaseNote(m.Lease)), network...)
	}
	if err != nil {
		return nil, err
	}
	secret, vm, err := m.objects(Learned{SSHKey: placeholderSSHKey, GuestKubeconfig: guestKubeconfig, Addresses: addrs}, network)
	if err != nil {
		return nil, err
	}
	return toYAML(readableSecret(secret), vm)
}

// GeneratedKubeconfigPlaceholder stands for the kubeconfig of the guest cluster's cloud-provider account
// (--harvester-generate-cloud-provider-config), which only a create makes in Harvester.
func GeneratedKubeconfigPlaceholder(cfg *config.Config) []byte {
	return fmt.Appendf(nil, "<kubeconfig of service account %s/%s, made in Harvester at create>", cfg.Namespace, config.CloudProviderAccountName(cfg.ClusterName))
}

// readableSecret moves a Secret's data to stringData, which the API accepts and which reads as text.
func readableSecret(s *corev1.Secret) *corev1.Secret {
	out := s.DeepCopy()
	out.StringData = map[string]string{}
	for k, v := range out.Data {
		out.StringData[k] = string(v)
	}
	out.Data = nil
	return out
}

// secretPlaceholders returns cfg with a placeholder for each data Secret's content, naming the Secret: user
// data that is a cloud-config of one comment, which the merge keeps where the user's part goes, and network data
// of one comment (the VM then refers to the network data, as the create's does).
func secretPlaceholders(cfg *config.Config) *config.Config {
	placeholder := func(ref *config.SecretKeyRef, header, what, done string) *config.SecretValue {
		if ref == nil {
			return nil
		}
		return &config.SecretValue{Key: ref.Key, Data: fmt.Appendf(nil, "%s# <the %s of Secret %s/%s (key %s), %s at create>\n",
			header, what, ref.Namespace, ref.Name, strings.Join(ref.Keys(), " or "), done)}
	}
	return cfg.WithSecretData(placeholder(cfg.UserDataSecret, "#cloud-config\n", "user data", "read and merged here"),
		placeholder(cfg.NetworkDataSecret, "", "network-config", "read"))
}

// leaseNote is the comment render puts above the network data of a machine with a lease of plan.
func leaseNote(l *LeasePlan) string {
	return fmt.Sprintf("# The address is leased at create from IPPool %s of Harvester's managed DHCP and pinned to the VM; the guest takes it by DHCP.\n"+
		"# The MAC address shown is derived anew for each create.\n", l.Pool)
}
