package config

import (
	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudInit reads the three cloud-init inputs: the user's user data and network data (text or base64), and
// the document behind --harvester-cloud-config (the file rancher-machine writes with Rancher's install script).
// The network data is validated here; the user data with checkCloudInit, once the rest of the configuration is
// known.
func parseCloudInit(p *Problems, opts drivers.DriverOptions) (user, rancher, network []byte) {
	if raw := opts.String(FlagUserData); raw != "" {
		user, _ = userdata.DecodeBase64OrPlain(raw, cloudinit.IsUserData)
	}
	rancher, err := userdata.ReadFileOrInline(opts.String(FlagCloudConfig))
	if err != nil {
		p.Addf(FlagCloudConfig, "%v", err)
	}
	if raw := opts.String(FlagNetworkData); raw != "" {
		network, _ = userdata.DecodeBase64OrPlain(raw, networkconfig.IsNetworkData)
		if err := networkconfig.Validate(network); err != nil {
			p.Addf(FlagNetworkData, "%v", err)
		}
	}
	return user, rancher, network
}

// checkCloudInit checks what goes into the machine's user data with cloudinit.Check, so a document cloud-init
// could not use is reported now instead of surfacing as a guest that never joins. Each problem is filed under
// the flag of its part.
func checkCloudInit(p *Problems, cfg *Config) {
	if err := cloudinit.Check(CloudInitInput(cfg, nil, nil)); err != nil {
		p.AddCloudInit(err)
	}
}

// CloudInitInput gathers what goes into the machine's user data: the driver's parts (hostname, SSH user, keys
// and password, the guest agent, the cloud provider's kubeconfig), the user's user data and Rancher's
// install-script document.
func CloudInitInput(cfg *Config, authorizedKeys []string, guestKubeconfig []byte) cloudinit.Input {
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
