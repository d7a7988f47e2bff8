package objects

import (
	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// UserData renders the user data the machine boots with (see package cloudinit for the merge rules). A
// problem is reported against the flag of the part at fault, as ParseConfig reports it.
func UserData(cfg *config.Config, authorizedKeys []string, guestKubeconfig []byte) ([]byte, error) {
	out, err := cloudinit.UserData(config.CloudInitInput(cfg, authorizedKeys, guestKubeconfig))
	if err != nil {
		var p config.Problems
		p.AddCloudInit(err)
		return nil, p.Err()
	}
	return out, nil
}
