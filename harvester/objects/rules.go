package objects

import (
	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// Rules are the rules of config's validation pass that only the builders can apply in full: pass them to
// config.ParseConfig, so that a configuration a create would refuse is refused when its flags are parsed
// (SetConfigFromFlags, render, check), every problem in one list.
var Rules = []config.Rule{
	{Name: config.RuleUserData, Check: CheckUserData},
	{Name: config.RuleVMPatch, Check: checkVMPatch},
}

// CheckUserData checks the user data as a create builds it, with the driver's own parts known before the create
// (no SSH key and no cloud-provider kubeconfig yet: those are the driver's, made to fit): every part read on its
// own, then, when all read, the rules between them (see cloudinit.Check). Each problem is filed under the flag of
// its part. The create checks user data read from a Secret (--harvester-user-data-secret) with it too, as it
// reads it.
func CheckUserData(p *config.Problems, cfg *config.Config) {
	if err := cloudinit.Check(cloudInitInput(cfg, nil, nil)); err != nil {
		p.AddCloudInit(cfg, err)
	}
}

// checkVMPatch applies --harvester-vm-patch to the VM as render shows it (the facts only a create learns are
// placeholders), so that a patch that does not apply or changes the driver's own parts is refused before a create
// begins. A create applies it again to the VM it sends. It waits for every flag to parse: the VM of a half-parsed
// configuration would make a sound patch look wrong.
func checkVMPatch(p *config.Problems, cfg *config.Config) {
	if cfg.VMPatch == nil || !cfg.Parsed() {
		return
	}
	vm, err := buildVM(cfg, renderFacts(cfg), placeholderPVCSuffix)
	if err != nil {
		return // not the patch's problem; render and the create report it
	}
	patchVM(p, vm, cfg.VMPatch)
}
