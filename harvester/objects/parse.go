package objects

import (
	"github.com/rancher/machine/libmachine/drivers"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// ParseConfig turns the flags of one machine into its validated Config (config.Parse) and builds its objects
// (Build), once. What only the builders can check is checked here, after the flags' own rules, and told with
// their problems, every problem in one error: the user data merged with the driver's own parts as a create merges
// it (CheckUserData), and --harvester-vm-patch applied to the VM (Build). The Machine is what render prints and
// what the pre-flight completes, judges and hands to the create.
func ParseConfig(machineName string, opts drivers.DriverOptions) (*config.Config, *Machine, error) {
	cfg, p := config.Parse(machineName, opts)
	if cfg == nil {
		return nil, nil, p.Err()
	}
	// Each part was read on its own by config's rule; whether they merge is told once they all read.
	if cloudinit.CheckParts(cfg.UserData, cfg.RancherUserData, cfg.SSH.Password) == nil {
		CheckUserData(&p, cfg)
	}
	if err := p.Err(); err != nil {
		return nil, nil, err
	}
	m, err := Build(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, m, nil
}

// CheckUserData checks the user data as a create builds it, with the driver's own parts known before the create
// (no SSH key and no cloud-provider kubeconfig yet: those are the driver's, made to fit): every part read on its
// own, then, when all read, the rules between them (see cloudinit.Check). Each problem is filed under the flag of
// its part. The pre-flight checks user data read from a Secret (--harvester-user-data-secret) with it too, as it
// reads it.
func CheckUserData(p *config.Problems, cfg *config.Config) {
	if err := cloudinit.Check(cloudInitInput(cfg, nil, nil)); err != nil {
		p.AddCloudInit(cfg, err)
	}
}
