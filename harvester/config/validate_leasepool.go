package config

import (
	"fmt"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
)

// The rules of --harvester-ip-pool-name (see parseLeasePool) with the other pool, the NIC it addresses and the
// user's network data. They apply whenever the flag is given, even with a value that did not parse.

// oneAddressPool: the first NIC takes its address from --harvester-ip-pool's range or from a Harvester IPPool,
// not both.
func oneAddressPool(p *Problems, cfg *Config) {
	if cfg.given.leasePool && cfg.given.ipPool {
		p.Addf(FlagIPPoolName, "cannot go with --%s: the first NIC's address comes from one pool, Harvester's IPPool (leased by its managed DHCP) or the driver's range; drop one of the two", FlagIPPool)
	}
}

// leaseNICCanLease: the first NIC must be able to take a lease of Harvester's managed DHCP (LeaseRefusal), and
// its MAC address, to which the lease is bound, must be each machine's own.
func leaseNICCanLease(p *Problems, cfg *Config) {
	if !cfg.given.leasePool || len(cfg.NICs) == 0 {
		return
	}
	nic := cfg.NICs[0]
	if why := LeaseRefusal(nic); why != "" {
		p.Addf(FlagIPPoolName, "cannot lease an address to the first NIC: %s", why)
		return
	}
	if nic.MACAddress != "" {
		// vm-dhcp-controller keys a network's leases by MAC address (pkg/controller/vmnetcfg/controller.go, Allocate:
		// a MAC it knows gets that MAC's address again), so machines sharing one would share the address.
		p.Addf(nic.Flag, "%s: macAddress %s cannot go with --%s: the lease is bound to the MAC address, and every machine of the configuration would share it and its address; leave it empty, and the driver derives one for each machine",
			nic.Name, nic.MACAddress, FlagIPPoolName)
	}
}

// LeaseRefusal says why nic cannot take its address from an IPPool of Harvester's managed DHCP, or "" when it
// can. It is the one place that says so: the rule above and the pre-flight ask it, and every kind of NIC that
// cannot be leased an address gets its reason here. The managed DHCP serves VM networks: its agent answers on
// the network's bridge, and its controller makes a lease for each NIC of a VM that has a MAC address on a Multus
// network (vm-dhcp-controller pkg/controller/vm/controller.go, OnChange).
func LeaseRefusal(nic NIC) string {
	switch {
	case nic.Masquerade || nic.Network == nil:
		return fmt.Sprintf("%s is a masquerade interface on the pod network, whose addresses the pod network hands out; make the first interface in --%s a bridge on a VM network", nic.Name, FlagNetworkInfo)
	}
	return ""
}

// networkDataLeavesLease applies the precedence rule of --harvester-network-data over the first NIC's DHCP entry
// (see networkconfig.AddStatic) as far as it can be known before the create, which derives the NIC's MAC address.
func networkDataLeavesLease(p *Problems, cfg *Config) {
	if !cfg.given.leasePool || len(cfg.NetworkData) == 0 || networkconfig.Validate(cfg.NetworkData) != nil {
		return
	}
	if err := networkconfig.CheckStatic(cfg.NetworkData, ""); err != nil {
		p.AddLeaseConflict(err)
	}
}

// networkDataSecretWithoutLease: as with --harvester-ip-pool (networkDataSecretWithoutPool), the driver adds the
// first NIC's entry to the network data and holds the user's to it before anything is made; a Secret's network
// data is known only when the create reads it.
func networkDataSecretWithoutLease(p *Problems, cfg *Config) {
	if cfg.given.networkDataSecret && cfg.given.leasePool {
		p.Addf(FlagNetworkDataSecret, "cannot go with --%s, which writes the first NIC's DHCP entry into the network data: "+
			"give the network data inline with --%s (version 2, its ethernets matched by macaddress), or drop one of the two", FlagIPPoolName, FlagNetworkData)
	}
}
