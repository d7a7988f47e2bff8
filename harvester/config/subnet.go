package config

import "net/netip"

// LastAddr is the last address of subnet p: for IPv4 its broadcast address.
func LastAddr(p netip.Prefix) netip.Addr { return lastOf(p) }
