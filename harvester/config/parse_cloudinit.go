package config

import (
	"strings"

	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// parseCloudInit reads the cloud-init inputs: the user's user data and network data (text or base64), and
// the document behind --harvester-cloud-config (the file rancher-machine writes with Rancher's install script),
// and the Secrets of the user data and network data kept in Harvester (read at create time). The network data is
// validated here; what cloud-init makes of the user data, Rancher's document and the SSH password, each on its own,
// is a rule (checkCloudInitParts), as is which of a flag and its Secret is given.
func parseCloudInit(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	cfg.UserData, cfg.RancherUserData, cfg.NetworkData = parseCloudInitDocs(p, opts)
	for _, s := range []struct {
		flag  string
		ref   **SecretKeyRef
		given *bool
	}{
		{FlagUserDataSecret, &cfg.UserDataSecret, &cfg.given.userDataSecret},
		{FlagNetworkDataSecret, &cfg.NetworkDataSecret, &cfg.given.networkDataSecret},
	} {
		value := opts.String(s.flag)
		*s.given = strings.TrimSpace(value) != ""
		*s.ref = parseSecretKeyRef(p, s.flag, value, cfg.Namespace)
	}
}

// parseCloudInitDocs reads the three documents parseCloudInit reads.
func parseCloudInitDocs(p *Problems, opts drivers.DriverOptions) (user, rancher, network []byte) {
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
