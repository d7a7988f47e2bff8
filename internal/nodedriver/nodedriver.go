// Package nodedriver writes the NodeDriver object (management.cattle.io/v3) that installs this driver on a stock
// Rancher under a second name (see harvester/identity), for one release archive.
//
// Rancher reads the object in rancher/rancher pkg/controllers/management/drivers/nodedriver/machine_driver.go:
// it downloads spec.url, checks spec.checksum (the archive's sha256; base_driver.go getHasher), names the driver
// after the archive's docker-machine-driver-* entry (base_driver.go copyBinary), builds the <name>config schema
// from the binary's flags, and makes the cloud credential type <name>credentialConfig from the fields the
// privateCredentialFields / publicCredentialFields / optionalCredentialFields / defaults annotations list
// (getCredFields). Provisioning jobs find the
// NodeDriver by the driver name (pkg/controllers/capr/machineprovision/args.go getArgsEnvAndStatus), so
// metadata.name is the driver name.
package nodedriver

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// The cloud credential of the second name is declared as Rancher declares its built-in Harvester credential
// (rancher/rancher pkg/data/management/machinedriver_data.go, DriverData[HarvesterDriver], the same in v2.12.12,
// v2.13.8, v2.14.4 and v2.15.0): the kubeconfig private, the Harvester cluster's type and id public, the id optional,
// the type "imported" unless given. Rancher turns these annotations into the credential type
// <name>credentialconfig (pkg/controllers/management/drivers/nodedriver/machine_driver.go getCredFields,
// createCredSchema: a field is required unless optional, a default is the field's default).
//
// The public fields are what Rancher's own Harvester code reads of a credential, whatever the driver's name: the
// RKE2/K3s cluster page's setHarvesterChartValues makes the guest cluster's cloud-provider config and sets the
// harvester-cloud-provider chart's global.cattle.clusterName whenever the cloud provider is harvester and
// decodedData.clusterId is set (rancher/dashboard shell/edit/provisioning.cattle.io.cluster/rke2.vue, v2.12.12 to
// v2.15.0); decodedData is the credential's <name>credentialConfig, and the API returns public fields only
// (pkg/api/norman/customization/cred/store.go decodeNonPasswordFields; password fields are left out of every
// answer: rancher/norman parse/builder/builder.go fieldMatchesOp). The driver reads neither field: Rancher hands
// them to it as HCIVM_CLUSTER_TYPE and HCIVM_CLUSTER_ID, which its compatibility flags take and ignore.
var (
	// CredentialFields are the private fields: stored in the credential Secret, never returned by Rancher's API.
	CredentialFields = []string{"kubeconfigContent"}
	// PublicCredentialFields are returned by Rancher's API as the credential's decodedData.
	PublicCredentialFields = []string{"clusterType", "clusterId"}
	// OptionalCredentialFields may be empty: a kubeconfig pasted for a Harvester Rancher has not imported.
	OptionalCredentialFields = []string{"clusterId"}
	// CredentialDefaults are field:value pairs (Rancher's ParseKeyValueString format).
	CredentialDefaults = []string{"clusterType:imported"}
)

// CredentialAnnotations are the NodeDriver's annotations that declare its credential type.
func CredentialAnnotations() map[string]string {
	return map[string]string{
		"privateCredentialFields":  strings.Join(CredentialFields, ","),
		"publicCredentialFields":   strings.Join(PublicCredentialFields, ","),
		"optionalCredentialFields": strings.Join(OptionalCredentialFields, ","),
		"defaults":                 strings.Join(CredentialDefaults, ","),
	}
}

// Archive is the file name of the release archive of driver name for arch: docker-machine-driver-<name>-<arch>.tar.gz,
// holding the one file docker-machine-driver-<name>. Rancher's download script takes the driver name from the
// file name up to the first '-', '_' or '.' (rancher/machine package/download_driver.sh).
func Archive(name, arch string) string {
	return identity.BinaryPrefix + name + "-" + arch + ".tar.gz"
}

// Spec is what one NodeDriver manifest says.
type Spec struct {
	Name     string // the driver name, e.g. identity.Release
	URL      string // where Rancher downloads the archive
	Checksum string // the archive's sha256, hex
	Version  string // the release, for the comment
	Arch     string // the archive's architecture, for the comment
}

// NodeDriver is the object a manifest holds, with the fields Rancher reads (management.cattle.io/v3).
type NodeDriver struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   Metadata       `json:"metadata"`
	Spec       NodeDriverSpec `json:"spec"`
}

// Metadata is a NodeDriver's name (the driver's) and annotations (its credential fields).
type Metadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
}

// NodeDriverSpec is what Rancher downloads, checks and shows.
type NodeDriverSpec struct {
	Active           bool     `json:"active"`
	Builtin          bool     `json:"builtin"`
	DisplayName      string   `json:"displayName"`
	URL              string   `json:"url"`
	Checksum         string   `json:"checksum"`
	WhitelistDomains []string `json:"whitelistDomains"`
}

// Manifest renders the NodeDriver for s as YAML, with a comment saying what it is and what Rancher's generic
// forms need: the credential's kubeconfig base64-encoded, since the generic credential form is a KeyValue of
// multi-line text areas in 2.12 to 2.14 but, since 2.15, a one-line password input for a private field
// (rancher/dashboard shell/cloud-credential/generic.vue, typeForField); the cluster name set by hand, since Rancher
// adds it only for the driver named harvester (rancher/rancher pkg/controllers/capr/machineprovision/args.go toArgs).
func Manifest(s Spec) ([]byte, error) {
	if err := identity.ValidName(s.Name); err != nil || s.Name == identity.Canonical {
		return nil, fmt.Errorf("-name %q: a second driver name is needed (not %s): %v", s.Name, identity.Canonical, err)
	}
	if len(s.Checksum) != 64 || strings.Trim(strings.ToLower(s.Checksum), "0123456789abcdef") != "" {
		return nil, fmt.Errorf("the checksum of %s must be a sha256 in hex, got %q", s.URL, s.Checksum)
	}
	host, err := urlHost(s.URL)
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(NodeDriver{
		APIVersion: "management.cattle.io/v3",
		Kind:       "NodeDriver",
		Metadata:   Metadata{Name: s.Name, Annotations: CredentialAnnotations()},
		Spec: NodeDriverSpec{
			Active:           true,
			DisplayName:      s.Name,
			URL:              s.URL,
			Checksum:         strings.ToLower(s.Checksum),
			WhitelistDomains: []string{host},
		},
	})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# The Harvester node driver %s (%s) as a second node driver named %s, for a stock Rancher:\n"+
		"#   kubectl apply -f <this file>   (on Rancher's local cluster)\n"+
		"# Its cloud credential holds the Harvester kubeconfig. In Rancher's generic credential form paste it\n"+
		"# base64-encoded (base64 -w0): 2.12 to 2.14 show a multi-line text area that keeps line breaks, 2.15 a\n"+
		"# one-line password input that drops them.\n"+
		"# Set clusterName in each machine config: Rancher passes the cluster's name only to the driver named harvester.\n",
		s.Version, s.Arch, s.Name)
	return append([]byte(head), body...), nil
}

func urlHost(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, "https://")
	host, _, _ := strings.Cut(rest, "/")
	if !ok || host == "" {
		return "", fmt.Errorf("the download URL must be https://host/…, got %q", u)
	}
	return host, nil
}

// ReadChecksums reads a sha256sums file (goreleaser's checksum file, `sha256sum` output): file name → sum.
func ReadChecksums(r io.Reader) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 {
			sums[strings.TrimPrefix(fields[1], "*")] = fields[0]
		}
	}
	return sums, sc.Err()
}
