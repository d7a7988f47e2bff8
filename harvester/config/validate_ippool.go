package config

import "github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"

// The rules of --harvester-ip-pool (see parseIPPool) with the NIC it addresses and the user's network data. They
// apply whenever a pool is given, even one with a problem of its own, so that every problem is told at once.

// poolNICIsBridge: the first NIC must be able to take a static address, so a bridge on a VM network. A
// masquerade interface sits behind KubeVirt's NAT on the pod network, whose addresses the pod network hands out.
func poolNICIsBridge(p *Problems, cfg *Config) {
	if !cfg.given.ipPool || len(cfg.NICs) == 0 || !cfg.NICs[0].Masquerade {
		return
	}
	p.Addf(FlagIPPool, "applies to the first NIC, which is a masquerade interface on the pod network; make the first interface in --%s a bridge on a VM network",
		FlagNetworkInfo)
}

// networkDataLeavesPool applies the precedence rule of --harvester-network-data over the pool (see
// networkconfig.AddStatic) as far as it can be known before the address is: the first NIC's MAC is known only
// when the user set it. The network data's own problems are its parser's.
func networkDataLeavesPool(p *Problems, cfg *Config) {
	if !cfg.given.ipPool || len(cfg.NetworkData) == 0 || networkconfig.Validate(cfg.NetworkData) != nil {
		return
	}
	mac := ""
	if len(cfg.NICs) > 0 {
		mac = cfg.NICs[0].MACAddress
	}
	if err := networkconfig.CheckStatic(cfg.NetworkData, mac); err != nil {
		p.AddStaticConflict(err)
	}
}
