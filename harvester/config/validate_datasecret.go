package config

// The rules of --harvester-user-data-secret and --harvester-network-data-secret with the inline flags and the IP
// pool. They apply whenever a Secret flag is given, even one whose value did not parse, so that every problem is
// told at once.

// oneUserDataSource: the user data comes from the flag or from a Secret, not both. Merging the two would be a
// rule of its own; which one wins would surprise half the users.
func oneUserDataSource(p *Problems, cfg *Config) {
	if cfg.given.userDataSecret && len(cfg.UserData) > 0 {
		p.Addf(FlagUserDataSecret, "cannot go with --%s: give the user data inline or in a Secret, not both", FlagUserData)
	}
}

// oneNetworkDataSource: the network data comes from the flag or from a Secret, not both.
func oneNetworkDataSource(p *Problems, cfg *Config) {
	if cfg.given.networkDataSecret && len(cfg.NetworkData) > 0 {
		p.Addf(FlagNetworkDataSecret, "cannot go with --%s: give the network data inline or in a Secret, not both", FlagNetworkData)
	}
}

// networkDataSecretWithoutPool: the driver adds --harvester-ip-pool's address to the network data and holds the
// user's to the pool before anything is made (networkDataLeavesPool); a Secret's network data is known only when
// the create reads it, so the two are refused together rather than found not to fit halfway through a create.
func networkDataSecretWithoutPool(p *Problems, cfg *Config) {
	if cfg.given.networkDataSecret && cfg.given.ipPool {
		p.Addf(FlagNetworkDataSecret, "cannot go with --%s, which writes the first NIC's static address into the network data: "+
			"give the network data inline with --%s (version 2, its ethernets matched by macaddress), or drop one of the two", FlagIPPool, FlagNetworkData)
	}
}
