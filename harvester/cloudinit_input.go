package harvester

import "github.com/harvester/docker-machine-driver-harvester/cloudinit"

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
