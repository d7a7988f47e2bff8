package config

import (
	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudInit reads the three cloud-init inputs: the user's user data and network data (text or base64), and
// the document behind --harvester-cloud-config (the file rancher-machine writes with Rancher's install script).
// The network data is validated here; what cloud-init makes of the user data, Rancher's document and the SSH
// password is a rule (RuleUserData).
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
