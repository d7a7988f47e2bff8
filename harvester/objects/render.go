package objects

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// Placeholders for what only a create learns: render shows them instead of inventing values.
const (
	placeholderSSHKey    = "<public key of the SSH key pair generated at create>"
	placeholderPVCSuffix = "<random>"
)

// Render returns the cloud-init Secret and the VirtualMachine a create would send for cfg, as YAML. Facts only
// a create learns (each image's storage class, the claim name suffix, the generated SSH key) are placeholders;
// a pool's address is the range's first (see renderNetworkData). Render reads no cluster: user data or network
// data kept in a Secret (--harvester-user-data-secret, --harvester-network-data-secret) is a placeholder naming
// the Secret, where the create puts what it reads there (secretPlaceholders).
// The Secret shows its data as stringData, so the user data a node will boot with can be read as is.
func Render(cfg *config.Config) ([]byte, error) {
	cfg = secretPlaceholders(cfg)
	facts := renderFacts(cfg)
	guestKubeconfig := cfg.CloudProvider.Kubeconfig
	if cfg.CloudProvider.Generate {
		guestKubeconfig = GeneratedKubeconfigPlaceholder(cfg)
	}
	userData, err := UserData(cfg, []string{placeholderSSHKey}, guestKubeconfig)
	if err != nil {
		return nil, err
	}
	network, err := renderNetworkData(cfg, facts)
	if err != nil {
		return nil, err
	}
	secret, err := CloudInitSecret(cfg, userData, network)
	if err != nil {
		return nil, err
	}
	vm, err := VirtualMachine(cfg, facts, placeholderPVCSuffix)
	if err != nil {
		return nil, err
	}
	return toYAML(readableSecret(secret), vm)
}

// RenderVM is the VirtualMachine Render shows for cfg (after --harvester-vm-patch), with the same placeholders for
// what only a create learns: what the autoscaling annotations of a pool are computed from (harvester/autoscale).
func RenderVM(cfg *config.Config) (*kubevirtv1.VirtualMachine, error) {
	cfg = secretPlaceholders(cfg)
	return VirtualMachine(cfg, renderFacts(cfg), placeholderPVCSuffix)
}

// renderFacts are the facts render shows: a placeholder for each image's storage class, a pool's first address
// (each range's first for a dual-stack pool), and a lease's MAC address as a create without an id derives it.
func renderFacts(cfg *config.Config) Facts {
	facts := Facts{ImageStorageClasses: map[config.Ref]string{}}
	for _, d := range cfg.Disks {
		if d.Image != nil {
			facts.ImageStorageClasses[*d.Image] = fmt.Sprintf("<storage class of image %s>", d.Image)
		}
	}
	if cfg.IPPool != nil {
		facts.StaticAddress = StaticAddressFor(cfg, cfg.IPPool.FirstFree())
		if v6 := cfg.IPPool6; v6 != nil {
			facts.StaticAddress6 = DualStatic(cfg, facts.StaticAddress, v6.FirstFree())
		}
	}
	facts.Lease = LeaseFor(cfg, "") // the MAC address a create without an id would get; each create's differs
	return facts
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
