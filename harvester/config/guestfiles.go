package config

import (
	"fmt"
	"sort"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// GuestCloudConfigPath is the Harvester cloud controller manager's --cloud-config default, written for every
// distribution.
const GuestCloudConfigPath = "/etc/kubernetes/cloud-config"

// Distribution is the Kubernetes distribution the guest cluster runs, as far as its Harvester cloud provider
// files go.
type Distribution struct {
	// ConfigPath is where the distribution's cloud provider charts read the kubeconfig: the file Rancher's
	// system-agent plan writes (Rancher's cluster form, rancher/dashboard, sets the harvester-cloud-provider
	// chart's cloudConfigPath to it). A plan that later writes it owns it from then on; at first boot, when
	// cloud-init runs, it has not yet.
	ConfigPath string
	// DropInPath and DropIn are the distribution's config drop-in that turns the Harvester cloud provider on, for
	// clusters installed outside Rancher's cloud provider setting. Both distributions read config.yaml.d in name
	// order and later files win: 90- comes after Rancher's 50-rancher.yaml.
	DropInPath string
	DropIn     string
}

// DefaultDistribution is the distribution assumed when none is named: Rancher's Harvester integration is RKE2's.
const DefaultDistribution = "rke2"

// Distributions are the distributions --harvester-cloud-provider-distribution accepts.
var Distributions = map[string]Distribution{
	"rke2": {
		ConfigPath: "/var/lib/rancher/rke2/etc/config-files/cloud-provider-config",
		DropInPath: "/etc/rancher/rke2/config.yaml.d/90-harvester-cloud-provider.yaml",
		DropIn:     "cloud-provider-name: harvester\ncloud-provider-config: /var/lib/rancher/rke2/etc/config-files/cloud-provider-config\n",
	},
	// K3s runs no bundled Harvester charts: the harvester-cloud-provider chart is installed with cloudConfigPath
	// set to ConfigPath (Harvester's cloud provider docs, "Deploying to the K3s cluster"). Its kubelet already
	// runs with --cloud-provider=external; K3s's own cloud controller has to go so it does not fight the
	// Harvester one over node addresses. Agents ignore the server-only key.
	"k3s": {
		ConfigPath: "/var/lib/rancher/k3s/etc/config-files/cloud-provider-config",
		DropInPath: "/etc/rancher/k3s/config.yaml.d/90-harvester-cloud-provider.yaml",
		DropIn:     "disable-cloud-controller: true\n",
	},
}

// distributionNames lists the accepted distribution names, sorted.
func distributionNames() []string {
	names := make([]string, 0, len(Distributions))
	for n := range Distributions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupDistribution returns the distribution of that name (rke2 or k3s).
func LookupDistribution(name string) (Distribution, error) {
	dist, ok := Distributions[name]
	if !ok {
		return Distribution{}, fmt.Errorf("must be %s, got %q", lists.Join(distributionNames(), "or"), name)
	}
	return dist, nil
}
