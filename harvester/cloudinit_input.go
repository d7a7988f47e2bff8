package harvester

import "github.com/harvester/docker-machine-driver-harvester/cloudinit"

// cloudInitInput gathers what goes into the machine's user data: the driver's parts (hostname, SSH user, keys
// and password, the guest agent, the cloud provider's kubeconfig), the user's user data and Rancher's
// install-script document.
func cloudInitInput(cfg *Config, authorizedKeys []string, guestKubeconfig []byte) cloudinit.Input {
	return cloudinit.Input{
		Hostname:          cfg.MachineName,
		SSHUser:           cfg.SSH.User,
		SSHAuthorizedKeys: authorizedKeys,
		SSHPassword:       cfg.SSH.Password,
		InstallGuestAgent: cfg.InstallGuestAgent,
		WriteFiles:        cloudProviderFiles(guestKubeconfig, cfg.CloudProvider.Distribution, cfg.CloudProvider.DropIn),
		User:              cfg.UserData,
		Rancher:           cfg.RancherUserData,
	}
}

// renderUserData renders the user data the machine boots with (see package cloudinit for the merge rules). A
// problem is reported against the flag of the part at fault, as ParseConfig reports it.
func renderUserData(cfg *Config, authorizedKeys []string, guestKubeconfig []byte) ([]byte, error) {
	out, err := cloudinit.UserData(cloudInitInput(cfg, authorizedKeys, guestKubeconfig))
	if err != nil {
		var p problems
		p.addCloudInit(err)
		return nil, p.err()
	}
	return out, nil
}
