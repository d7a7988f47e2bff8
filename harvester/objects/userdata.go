package objects

import (
	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// UserData renders the user data the machine boots with (see package cloudinit for the merge rules). A
// problem is reported against the flag of the part at fault, as ParseConfig reports it.
func UserData(cfg *config.Config, authorizedKeys []string, guestKubeconfig []byte) ([]byte, error) {
	out, err := cloudinit.UserData(cloudInitInput(cfg, authorizedKeys, guestKubeconfig))
	if err != nil {
		var p config.Problems
		p.AddCloudInit(cfg, err)
		return nil, p.Err()
	}
	return out, nil
}

// cloudInitInput gathers what goes into the machine's user data: the driver's parts (hostname, SSH user, keys
// and password, the guest agent, the cloud provider's kubeconfig), the user's user data and Rancher's
// install-script document.
func cloudInitInput(cfg *config.Config, authorizedKeys []string, guestKubeconfig []byte) cloudinit.Input {
	return cloudinit.Input{
		Hostname:          cfg.MachineName,
		SSHUser:           cfg.SSH.User,
		SSHAuthorizedKeys: authorizedKeys,
		SSHPassword:       cfg.SSH.Password,
		InstallGuestAgent: cfg.InstallGuestAgent,
		WriteFiles:        CloudProviderFiles(guestKubeconfig, cfg.CloudProvider.Distribution, cfg.CloudProvider.DropIn),
		User:              cfg.UserData,
		Rancher:           cfg.RancherUserData,
	}
}

// CloudProviderFiles are the files that give the guest cluster its cloud provider kubeconfig (root-only: it
// holds a token) at the CCM's default path and the distribution's, and with dropIn the distribution's config
// that switches the cloud provider on.
func CloudProviderFiles(kubeconfig []byte, dist config.Distribution, dropIn bool) []cloudinit.File {
	if len(kubeconfig) == 0 {
		return nil
	}
	files := []cloudinit.File{
		{Path: config.GuestCloudConfigPath, Content: string(kubeconfig), Owner: "root:root", Permissions: "0600"},
		{Path: dist.ConfigPath, Content: string(kubeconfig), Owner: "root:root", Permissions: "0600"},
	}
	if dropIn {
		files = append(files, cloudinit.File{Path: dist.DropInPath, Content: dist.DropIn, Owner: "root:root", Permissions: "0600"})
	}
	return files
}
