package config

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	"k8s.io/apimachinery/pkg/util/validation"
)

// IPPool is --harvester-ip-pool with its gateway and DNS servers: the addresses one of which each machine's first
// NIC gets, statically. Its addresses are never listed in memory: a pool may be an IPv6 /64.
type IPPool struct {
	First, Last netip.Addr   // the range, inclusive
	Subnet      netip.Prefix // the subnet the range lies in (masked)
	Gateway     netip.Addr   // the default gateway; invalid when none
	// DNS are the DNS servers of --harvester-ip-pool-dns: for a dual-stack pool, those of both families, on
	// both ranges.
	DNS []netip.Addr
	// Search are the DNS search domains (--harvester-ip-pool-dns-search); only with DNS servers.
	Search []string
	// raw is the range as given.
	raw string
	// skip are addresses of the range never given out: the gateway and the DNS servers. (A subnet given as a
	// CIDR starts and ends past its network and broadcast addresses, see cidrReserved.)
	skip []netip.Addr
}

// String renders the range as FIRST-LAST/PREFIX, the form recorded on allocations.
func (p *IPPool) String() string {
	return fmt.Sprintf("%s-%s/%d", p.First, p.Last, p.Subnet.Bits())
}

// Addresses calls yield with each address the pool gives out, in order, until it returns false.
func (p *IPPool) Addresses(yield func(netip.Addr) bool) {
	for a := p.First; a.IsValid() && a.Compare(p.Last) <= 0; a = a.Next() {
		if !slices.Contains(p.skip, a) && !yield(a) {
			return
		}
	}
}

// FirstFree is the first address the pool gives out (invalid when none).
func (p *IPPool) FirstFree() netip.Addr {
	var first netip.Addr
	p.Addresses(func(a netip.Addr) bool { first = a; return false })
	return first
}

// Size is how many addresses the pool gives out.
func (p *IPPool) Size() *big.Int {
	n := new(big.Int).Sub(addrInt(p.Last), addrInt(p.First))
	n.Add(n, big.NewInt(1))
	for _, a := range p.skip {
		if a.Compare(p.First) >= 0 && a.Compare(p.Last) <= 0 {
			n.Sub(n, big.NewInt(1))
		}
	}
	return n
}

// skipAddr sets a aside: the pool never gives it out.
func (p *IPPool) skipAddr(a netip.Addr) {
	if !slices.Contains(p.skip, a) {
		p.skip = append(p.skip, a)
	}
}

func addrInt(a netip.Addr) *big.Int {
	b := a.As16()
	return new(big.Int).SetBytes(b[:])
}

const ipPoolFormat = "FIRST-LAST/PREFIX (e.g. 10.0.0.10-10.0.0.59/24 or 2001:db8::10-2001:db8::59/64) or a subnet (e.g. 10.0.0.0/24)"

// parseIPPool reads --harvester-ip-pool with its gateway, DNS servers and search domains into cfg.IPPool and,
// for a dual-stack pool (one IPv4 and one IPv6 range), cfg.IPPool6 (IPv4 in IPPool); none without a pool or
// with a problem in it. How the pool goes with the NICs and the network data are rules (validate_ippool.go).
func parseIPPool(p *Problems, opts drivers.DriverOptions, cfg *Config) {
	raw := strings.TrimSpace(opts.String(FlagIPPool))
	gwRaw := strings.TrimSpace(opts.String(FlagIPPoolGateway))
	dnsRaw := strings.TrimSpace(opts.String(FlagIPPoolDNS))
	searchRaw := strings.TrimSpace(opts.String(FlagIPPoolDNSSearch))
	if raw == "" {
		for _, f := range [][2]string{{FlagIPPoolGateway, gwRaw}, {FlagIPPoolDNS, dnsRaw}, {FlagIPPoolDNSSearch, searchRaw}} {
			if f[1] != "" {
				p.Addf(f[0], "needs --%s: it belongs to a pool of static addresses, and none is given", FlagIPPool)
			}
		}
		return
	}
	cfg.given.ipPool = true
	before := len(p.List)
	pools, ok := parseRanges(p, raw)
	gateways := splitList(gwRaw)
	if gwRaw != "" && len(gateways) == 0 {
		p.Addf(FlagIPPoolGateway, "%q is not an IP address", gwRaw)
	}
	for i, s := range gateways {
		gw, err := parseAddr(s)
		if err != nil {
			p.Addf(FlagIPPoolGateway, "%s%v", nth(i, len(gateways)), err)
			continue
		}
		pool := poolOf(pools, gw)
		switch {
		case !ok:
		case pool != nil && pool.Gateway.IsValid() && pool.Gateway.Is4() == gw.Is4():
			p.Addf(FlagIPPoolGateway, "gives two %s gateways (%s and %s); give at most one of each family, the default gateway of that family's range", family(gw), pool.Gateway, gw)
		case pool == nil:
			p.Addf(FlagIPPoolGateway, "%s is an %s address, and --%s has no %s range: give one, or drop the gateway", gw, family(gw), FlagIPPool, family(gw))
		default:
			if err := pool.inSubnet(gw, "the gateway"); err != nil {
				p.Addf(FlagIPPoolGateway, "%v", err)
				continue
			}
			pool.Gateway = gw
			pool.skipAddr(gw)
		}
	}
	var dns []netip.Addr
	for i, s := range strings.Split(dnsRaw, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		a, err := parseAddr(s)
		switch {
		case err != nil:
			p.Addf(FlagIPPoolDNS, "server %d: %v", i+1, err)
		case ok && len(pools) == 1 && a.Is4() != pools[0].First.Is4():
			p.Addf(FlagIPPoolDNS, "%s is an %s address, the pool's are %s", a, family(a), family(pools[0].First))
		}
		if err == nil {
			dns = append(dns, a)
		}
	}
	search := parseSearchDomains(p, searchRaw)
	if len(search) > 0 && dnsRaw == "" {
		// cloud-init 22.4 skips a v2 nameservers entry without addresses, and the NIC's whole entry with it
		// (see networkconfig.Static.Search).
		p.Addf(FlagIPPoolDNSSearch, "needs --%s: cloud-init drops search domains given without DNS servers, and the static address with them", FlagIPPoolDNS)
	}
	for _, pool := range pools {
		pool.DNS, pool.Search = dns, search
		for _, a := range dns {
			pool.skipAddr(a)
		}
		if ok && len(p.List) == before && pool.Size().Sign() <= 0 {
			p.Addf(FlagIPPool, "%s has no address left to give out once its gateway and DNS servers are set aside", pool.raw)
		}
	}
	if len(p.List) > before || !ok {
		return
	}
	cfg.IPPool = pools[0]
	if len(pools) == 2 {
		cfg.IPPool6 = pools[1]
	}
}

// parseRanges reads the one or two comma-separated ranges of --harvester-ip-pool: at most one of each address
// family, IPv4 first in the result. ok is false when any is wrong (each reported).
func parseRanges(p *Problems, raw string) (pools []*IPPool, ok bool) {
	parts := splitList(raw)
	if len(parts) == 0 {
		p.Addf(FlagIPPool, "must be %s, got %q", ipPoolFormat, raw)
		return nil, false
	}
	if len(parts) > 2 {
		p.Addf(FlagIPPool, "gives %d ranges; give one, or two for a dual-stack NIC: one IPv4 and one IPv6 range, comma-separated (e.g. 10.0.0.10-10.0.0.59/24,2001:db8::10-2001:db8::59/64)", len(parts))
		return nil, false
	}
	ok = true
	for i, part := range parts {
		pool, err := parseRange(part)
		if err == nil {
			err = checkAssignable(pool)
		}
		if err != nil {
			p.Addf(FlagIPPool, "%s%v", nth(i, len(parts)), err)
			ok = false
			continue
		}
		pool.raw = part
		if other := familyPool(pools, pool.First); other != nil {
			p.Addf(FlagIPPool, "gives two %s ranges (%s and %s); a machine gets one address of each family: give one IPv4 and one IPv6 range at most", family(pool.First), other, pool)
			ok = false
			continue
		}
		pools = append(pools, pool)
	}
	if len(pools) == 2 && pools[1].First.Is4() {
		pools[0], pools[1] = pools[1], pools[0]
	}
	return pools, ok
}

// splitList is the non-blank comma-separated items of s, trimmed.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// nth names item i of a comma-separated list of n items in a problem ("item 2: "), and nothing when the list has
// one item, so a single range or gateway reads as it always did.
func nth(i, n int) string {
	if n < 2 {
		return ""
	}
	return "item " + strconv.Itoa(i+1) + ": "
}

// poolOf is the pool of a's family among pools, nil when none; with a single pool, that pool (whose family
// inSubnet then checks and words).
func poolOf(pools []*IPPool, a netip.Addr) *IPPool {
	if len(pools) == 1 {
		return pools[0]
	}
	return familyPool(pools, a)
}

// familyPool is the pool of a's family among pools, nil when none.
func familyPool(pools []*IPPool, a netip.Addr) *IPPool {
	for _, pool := range pools {
		if pool.First.Is4() == a.Is4() {
			return pool
		}
	}
	return nil
}

// The bounds Kubernetes puts on a pod's DNS search list (k8s.io/kubernetes pkg/apis/core/validation
// MaxDNSSearchPaths, MaxDNSSearchListChars, checked in validatePodDNSConfig): the guest's kubelet gives its pods
// the node's search list and drops what is past them, with a warning.
const (
	maxSearchDomains   = 32
	maxSearchListChars = 2048
)

// parseSearchDomains reads --harvester-ip-pool-dns-search: comma-separated DNS names (isDNSName), none given
// twice, at most maxSearchDomains of them and maxSearchListChars in all (joined by spaces, as Kubernetes counts).
// Past the count only the count is reported: each domain of a list of a thousand is not worth a problem.
func parseSearchDomains(p *Problems, raw string) []string {
	var given []string
	var position []int // each domain's place in the comma-separated list, blanks counted, as problems name it
	for i, d := range strings.Split(raw, ",") {
		if d = strings.TrimSpace(d); d != "" {
			given, position = append(given, d), append(position, i+1)
		}
	}
	if len(given) > maxSearchDomains {
		p.Addf(FlagIPPoolDNSSearch, "has %d domains; Kubernetes allows at most %d search domains for a node's pods: give at most %d", len(given), maxSearchDomains, maxSearchDomains)
		return nil
	}
	if n := len(strings.Join(given, " ")); n > maxSearchListChars {
		p.Addf(FlagIPPoolDNSSearch, "is %d characters long with a space between domains; Kubernetes allows at most %d for a node's pods: give fewer or shorter domains", n, maxSearchListChars)
	}
	var out []string
	for i, d := range given {
		switch {
		case !isDNSName(d):
			p.Addf(FlagIPPoolDNSSearch, "domain %d: %q is not a DNS name of lowercase letters, digits, '-' and '.' (e.g. corp.example.com, labels of at most 63 characters, at most 253 in all, no trailing dot)", position[i], d)
		case slices.Contains(out, d):
			p.Addf(FlagIPPoolDNSSearch, "domain %d: %s is given twice", position[i], d)
		default:
			out = append(out, d)
		}
	}
	return out
}

// isDNSName reports whether d is a DNS-1123 subdomain whose every label is a DNS-1123 label: lowercase letters,
// digits and '-', at most 63 characters a label (RFC 1035) and 253 in all.
func isDNSName(d string) bool {
	if len(validation.IsDNS1123Subdomain(d)) > 0 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if len(validation.IsDNS1123Label(label)) > 0 {
			return false
		}
	}
	return true
}

// parseRange reads FIRST-LAST/PREFIX, or a subnet, which gives out all its addresses but those cidrReserved.
func parseRange(raw string) (*IPPool, error) {
	rng, bitsText, ok := strings.Cut(raw, "/")
	if !ok {
		return nil, fmt.Errorf("must be %s, got %q: the prefix length is missing", ipPoolFormat, raw)
	}
	firstText, lastText, isRange := strings.Cut(rng, "-")
	if !isRange {
		subnet, err := netip.ParsePrefix(raw)
		switch {
		case err != nil || subnet.Addr().Zone() != "" || subnet.Addr().Is4In6():
			return nil, fmt.Errorf("must be %s, got %q", ipPoolFormat, raw)
		case subnet != subnet.Masked():
			return nil, fmt.Errorf("%s is an address in subnet %s, not a subnet: write the subnet, or a range of one address as %s-%s/%d",
				raw, subnet.Masked(), subnet.Addr(), subnet.Addr(), subnet.Bits())
		}
		pool := &IPPool{First: subnet.Addr(), Last: lastOf(subnet), Subnet: subnet}
		for _, a := range cidrReserved(subnet) {
			switch a {
			case pool.First:
				pool.First = a.Next()
			case pool.Last:
				pool.Last = a.Prev()
			}
		}
		return pool, nil
	}
	var errs []error
	first, err := parseAddr(firstText)
	if err != nil {
		errs = append(errs, fmt.Errorf("FIRST: %w", err))
	}
	last, err := parseAddr(lastText)
	if err != nil {
		errs = append(errs, fmt.Errorf("LAST: %w", err))
	}
	bits, err := strconv.Atoi(strings.TrimSpace(bitsText))
	if err != nil || strings.HasPrefix(strings.TrimSpace(bitsText), "+") {
		errs = append(errs, fmt.Errorf("PREFIX %q is not a prefix length", bitsText))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("must be %s, got %q: %w", ipPoolFormat, raw, errors.Join(errs...))
	}
	switch {
	case first.Is4() != last.Is4():
		return nil, fmt.Errorf("%q: FIRST %s is an %s address and LAST %s an %s one", raw, first, family(first), last, family(last))
	case bits < 0 || bits > first.BitLen():
		return nil, fmt.Errorf("%q: PREFIX must be a prefix length from 0 to %d for %s, got %d", raw, first.BitLen(), family(first), bits)
	case last.Less(first):
		return nil, fmt.Errorf("%q: LAST %s comes before FIRST %s", raw, last, first)
	}
	subnet := netip.PrefixFrom(first, bits).Masked()
	if !subnet.Contains(last) {
		return nil, fmt.Errorf("%q: LAST %s is outside the subnet %s of FIRST", raw, last, subnet)
	}
	for _, a := range cidrReserved(subnet) {
		if a.Compare(first) >= 0 && a.Compare(last) <= 0 {
			return nil, fmt.Errorf("%q: the range holds %s, the %s of %s, which no machine can use", raw, a, reservedName(a), subnet)
		}
	}
	return &IPPool{First: first, Last: last, Subnet: subnet}, nil
}

// MaxPoolSize bounds the addresses of one --harvester-ip-pool. Each address a machine holds is a ConfigMap in
// Harvester, and a full pool is walked address by address by every create and pre-flight on it; 65,536 (an IPv4
// /16) is more machines than one network's node pools hold, and keeps both bounded.
const MaxPoolSize = 1 << 16

// specialRanges are the blocks no node can be given an address from (RFC 6890 and RFC 4291): the unspecified
// address, loopback, link-local, multicast and the IPv4 limited broadcast address.
var specialRanges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8, unspecified)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the limited broadcast address (255.255.255.255)"},
	{netip.MustParsePrefix("::/128"), "the unspecified address (::)"},
	{netip.MustParsePrefix("::1/128"), "loopback (::1)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (fe80::/10)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (ff00::/8)"},
}

// checkAssignable refuses a pool that holds an address no node can use, and a pool over MaxPoolSize.
func checkAssignable(pool *IPPool) error {
	for _, sr := range specialRanges {
		if sr.prefix.Addr().Is4() != pool.First.Is4() {
			continue
		}
		if pool.First.Compare(lastOf(sr.prefix)) <= 0 && pool.Last.Compare(sr.prefix.Addr()) >= 0 {
			return fmt.Errorf("%s-%s reaches into %s, which no node can be given; use a range of unicast addresses of the VM network's subnet", pool.First, pool.Last, sr.what)
		}
	}
	if size := pool.Size(); size.Cmp(big.NewInt(MaxPoolSize)) > 0 {
		return fmt.Errorf("%s-%s holds %s addresses; a pool holds at most %d (each address a machine holds is an object in Harvester): give a smaller range, e.g. %s-%s",
			pool.First, pool.Last, size, MaxPoolSize, pool.First, nthAfter(pool.First, MaxPoolSize-1))
	}
	return nil
}

// nthAfter is the address n after a (saturating at the end of the address space).
func nthAfter(a netip.Addr, n int) netip.Addr {
	sum := new(big.Int).Add(addrInt(a), big.NewInt(int64(n)))
	b := sum.FillBytes(make([]byte, 16))
	out := netip.AddrFrom16([16]byte(b))
	if a.Is4() {
		return out.Unmap()
	}
	return out
}

// parseAddr reads one IP address (no zone; an IPv4-mapped IPv6 address is read as the IPv4 address).
func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", strings.TrimSpace(s))
	}
	return a.Unmap(), nil
}

// lastOf is the last address of a subnet.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		if hostBits := len(b)*8 - p.Bits() - (len(b)-1-i)*8; hostBits > 0 {
			b[i] |= byte(0xff >> max(0, 8-hostBits))
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// cidrReserved are the addresses of a subnet no machine gets: for IPv4 the network and broadcast addresses
// (except in /31 and /32, RFC 3021), for IPv6 the subnet-router anycast address (RFC 4291 2.6.1; not in /127 and
// /128).
func cidrReserved(p netip.Prefix) []netip.Addr {
	switch {
	case p.Addr().Is4() && p.Bits() <= 30:
		return []netip.Addr{p.Masked().Addr(), lastOf(p)}
	case p.Addr().Is6() && p.Bits() <= 126:
		return []netip.Addr{p.Masked().Addr()}
	}
	return nil
}

func reservedName(a netip.Addr) string {
	if a.Is4() {
		return "network or broadcast address"
	}
	return "subnet-router anycast address"
}

// inSubnet checks that a (named what) can serve the pool's subnet.
func (p *IPPool) inSubnet(a netip.Addr, what string) error {
	switch {
	case a.Is4() != p.First.Is4():
		return fmt.Errorf("%s is an %s address, the pool's are %s", a, family(a), family(p.First))
	case !p.Subnet.Contains(a):
		return fmt.Errorf("%s %s is outside the pool's subnet %s: the machines could not reach it", what, a, p.Subnet)
	case slices.Contains(cidrReserved(p.Subnet), a):
		return fmt.Errorf("%s %s is the %s of %s", what, a, reservedName(a), p.Subnet)
	}
	return nil
}

func family(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// IPPoolNetwork is namespace/name of the network of cfg's pool, saved with the machine (Driver.IPPoolNetwork).
func IPPoolNetwork(cfg *Config) string {
	if cfg.IPPool == nil || len(cfg.NICs) == 0 || cfg.NICs[0].Network == nil {
		return ""
	}
	return cfg.NICs[0].Network.String()
}
