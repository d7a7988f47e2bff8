package config

import (
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
)

// parseLeasePool reads --harvester-ip-pool-name, the IPPool of Harvester's managed DHCP the first NIC's address is
// leased from, into cfg.LeasePool: namespace/name, or a name in the namespace of the first NIC's network (where
// Harvester makes a VM network's IPPool), else the VM namespace. How it goes with the NICs, the other pool and the
// network data are rules (validate_leasepool.go).
func parseLeasePool(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	raw := strings.TrimSpace(opts.String(FlagIPPoolName))
	if raw == "" {
		return
	}
	cfg.given.leasePool = true
	ns := cfg.Namespace
	if len(cfg.NICs) > 0 && cfg.NICs[0].Network != nil {
		ns = cfg.NICs[0].Network.Namespace
	}
	ref, err := parseRef(raw, ns)
	if err != nil {
		p.Addf(FlagIPPoolName, "%v", err)
		return
	}
	cfg.LeasePool = &ref
}
