package preflight

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// lbRanges reads a pool's ranges as Harvester's load balancer does before it allocates from them
// (harvester-load-balancer pkg/ipam/allocator.go MakeRange, for each range of NewAllocator, at commit e861dc94).
// An error means the load balancer cannot make the pool's allocator (NewAllocator fails on any bad range, and the
// IP-pool controller's OnChange with it), so the pool gives out no address.
func lbRanges(ranges []kube.IPPoolRange) ([]lbRange, error) {
	out := make([]lbRange, 0, len(ranges))
	for i, r := range ranges {
		rng, err := lbRangeOf(r)
		if err != nil {
			return nil, fmt.Errorf("range %d: %w", i+1, err)
		}
		out = append(out, rng)
	}
	return out, nil
}

// lbRangeOf is one range, as MakeRange makes it. An IPv4 /32 is its one address. Otherwise an empty rangeStart is
// the subnet's address plus one, an empty rangeEnd its last address, less one for IPv4 (the broadcast address): the
// defaults of the CNI host-local allocator's Range.Canonicalize (containernetworking/plugins
// plugins/ipam/host-local/backend/allocator/range.go, v1.9.1), which MakeRange sets itself. A given address must
// lie in the subnet and be neither its first nor its last address, for IPv6 too (parseIP); so must a given
// gateway. A start past the end is swapped with it. An IPv4-mapped IPv6 subnet is refused here (net.ParseCIDR
// would read it, but lastIP then decrements the wrong byte): a --harvester-ip-pool is never one.
func lbRangeOf(r kube.IPPoolRange) (lbRange, error) {
	given, err := netip.ParsePrefix(r.Subnet)
	if err != nil || given.Addr().Is4In6() {
		return lbRange{}, fmt.Errorf("subnet %q is not a CIDR", r.Subnet)
	}
	subnet := given.Masked()
	var start, end netip.Addr
	switch {
	case subnet.Addr().Is4() && subnet.Bits() == 32:
		start, end = subnet.Addr(), subnet.Addr()
	default:
		start, end = subnet.Addr().Next(), config.LastAddr(subnet)
		if subnet.Addr().Is4() {
			end = end.Prev()
		}
	}
	if start, err = lbAddr(r.RangeStart, subnet, start); err != nil {
		return lbRange{}, fmt.Errorf("rangeStart: %w", err)
	}
	if end, err = lbAddr(r.RangeEnd, subnet, end); err != nil {
		return lbRange{}, fmt.Errorf("rangeEnd: %w", err)
	}
	if _, err = lbAddr(r.Gateway, subnet, netip.Addr{}); err != nil {
		return lbRange{}, fmt.Errorf("gateway: %w", err)
	}
	if !start.IsValid() || !end.IsValid() {
		return lbRange{}, errors.New("subnet " + subnet.String() + " holds no range") // the last IPv6 /128
	}
	if start.Compare(end) > 0 {
		start, end = end, start
	}
	return lbRange{First: start, Last: end, Subnet: subnet}, nil
}

// lbAddr reads an address of a range (parseIP in allocator.go): def when s is empty.
func lbAddr(s string, subnet netip.Prefix, def netip.Addr) (netip.Addr, error) {
	if s == "" {
		return def, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	a = a.Unmap() // net.IPNet.Contains reads an IPv4-mapped address as IPv4
	switch {
	case !subnet.Contains(a):
		return netip.Addr{}, fmt.Errorf("%s is outside subnet %s", a, subnet)
	case a == subnet.Addr():
		return netip.Addr{}, fmt.Errorf("%s is the network address of %s", a, subnet)
	case a == config.LastAddr(subnet):
		return netip.Addr{}, fmt.Errorf("%s is the last address of %s", a, subnet)
	}
	return a, nil
}
