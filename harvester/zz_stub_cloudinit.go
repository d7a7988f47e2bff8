//go:build !cloudinit_ready

package harvester

import "github.com/rancher/machine/libmachine/drivers"

func parseCloudInit(p *problems, opts drivers.DriverOptions) (user, rancher, network []byte) {
	return []byte(opts.String(FlagUserData)), nil, []byte(opts.String(FlagNetworkData))
}

func renderUserData(cfg *Config, keys []string) ([]byte, error) {
	return append([]byte("#cloud-config\n"), cfg.UserData...), nil
}
