package harvester

import "github.com/harvester/docker-machine-driver-harvester/cloudinit"

// Where the guest's Harvester cloud provider and CSI driver find their kubeconfig: the CCM's --cloud-config
// default, and the file Rancher's system-agent plan writes for RKE2's bundled charts (Rancher's RKE2
// cluster form, rancher/dashboard, sets the harvester-cloud-provider chart's cloudConfigPath to it). A plan
// that later writes the RKE2 path owns it from then on; at first boot, when cloud-init runs, it has not yet.
const (
	guestCloudConfigPath     = "/etc/kubernetes/cloud-config"
	guestRKE2CloudConfigPath = "/var/lib/rancher/rke2/etc/config-files/cloud-provider-config"
	// A late drop-in: RKE2 reads config.yaml.d in name order and later files win, after Rancher's 50-rancher.yaml.
	guestRKE2DropInPath = "/etc/rancher/rke2/config.yaml.d/90-harvester-cloud-provider.yaml"
)

// cloudProviderFiles are the files that give the guest cluster its cloud provider kubeconfig (root-only: it
// holds a token), and with forRKE2 the RKE2 config that switches the cloud provider on.
func cloudProviderFiles(kubeconfig []byte, forRKE2 bool) []cloudinit.File {
	if len(kubeconfig) == 0 {
		return nil
	}
	files := []cloudinit.File{
		{Path: guestCloudConfigPath, Content: string(kubeconfig), Owner: "root:root", Permissions: "0600"},
		{Path: guestRKE2CloudConfigPath, Content: string(kubeconfig), Owner: "root:root", Permissions: "0600"},
	}
	if forRKE2 {
		files = append(files, cloudinit.File{
			Path:        guestRKE2DropInPath,
			Content:     "cloud-provider-name: harvester\ncloud-provider-config: " + guestRKE2CloudConfigPath + "\n",
			Owner:       "root:root",
			Permissions: "0600",
		})
	}
	return files
}
