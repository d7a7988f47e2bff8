package harvester

import (
	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudInit reads the three cloud-init inputs: the user's user data and network data (text or base64), and
// the document behind --harvester-cloud-config (the file rancher-machine writes with Rancher's install script).
// The user data is rendered once here, with the user's and Rancher's documents, so a document cloud-init could
// not use is reported now instead of surfacing as a guest that never joins.
func parseCloudInit(p *problems, opts drivers.DriverOptions, machineName string, ssh SSHConfig) (user, rancher, network []byte) {
	if raw := opts.String(FlagUserData); raw != "" {
		user, _ = userdata.DecodeBase64OrPlain(raw, cloudinit.IsUserData)
	}
	rancher, err := userdata.ReadFileOrInline(opts.String(FlagCloudConfig))
	if err != nil {
		p.addf(FlagCloudConfig, "%v", err)
	}
	probe := &Config{MachineName: machineName, SSH: ssh, InstallGuestAgent: true, UserData: user, RancherUserData: rancher}
	if _, err := renderUserData(probe, nil, nil); err != nil {
		p.addErr(FlagUserData, err)
	}
	if raw := opts.String(FlagNetworkData); raw != "" {
		network, _ = userdata.DecodeBase64OrPlain(raw, networkconfig.IsNetworkData)
		if err := networkconfig.Validate(network); err != nil {
			p.addf(FlagNetworkData, "%v", err)
		}
	}
	return user, rancher, network
}
