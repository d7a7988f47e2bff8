package networkconfig

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// ipNetwork parses what cloud-init's net.is_ip_network accepts (Python's ipaddress.ip_network, strict=False):
// an address, address/prefix, or IPv4 address/netmask.
func ipNetwork(s string) (netip.Addr, bool) {
	addr, suffix, hasSuffix := strings.Cut(strings.TrimSpace(s), "/")
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	if !hasSuffix {
		return a, true
	}
	if bits, err := strconv.Atoi(suffix); err == nil {
		return a, bits >= 0 && bits <= a.BitLen() && !strings.HasPrefix(suffix, "+")
	}
	return a, a.Is4() && ipv4Mask(suffix)
}

// ipv4Mask reports whether s is a dotted IPv4 netmask (contiguous ones).
func ipv4Mask(s string) bool {
	m, err := netip.ParseAddr(s)
	if err != nil || !m.Is4() {
		return false
	}
	b := m.As4()
	ones, size := net.IPv4Mask(b[0], b[1], b[2], b[3]).Size()
	return size == 32 && ones >= 0
}

// cidr parses address/prefix with the prefix required, as netplan requires for `addresses`.
func cidr(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	return p, err == nil
}

// ipAddr parses a plain IP address.
func ipAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	return a, err == nil && a.Zone() == ""
}

func (c *netCheck) ip(n *yaml.Node, path string) (netip.Addr, bool) {
	s, ok := yamlnode.ScalarText(n)
	a, valid := ipAddr(s)
	if !ok || !valid {
		c.addf(path, "must be an IP address%s", notText(n))
	}
	return a, ok && valid
}

func (c *netCheck) ipList(n *yaml.Node, path string) {
	n = yamlnode.Resolve(n)
	if n.Kind == yaml.ScalarNode { // cloud-init splits a string on white space (_normalize_subnet listify)
		for i, f := range strings.Fields(n.Value) {
			if _, ok := ipAddr(f); !ok {
				c.addf(path, "word %d of the list is not an IP address", i+1)
			}
		}
		return
	}
	for i, e := range c.items(n, path, "IP addresses") {
		c.ip(e, index(path, i))
	}
}

func (c *netCheck) mac(n *yaml.Node, path string) {
	s, ok := yamlnode.ScalarText(n)
	if _, err := net.ParseMAC(strings.TrimSpace(s)); !ok || err != nil {
		c.addf(path, "must be a MAC address like 52:54:00:12:34:56%s", notText(n))
	}
}

func (c *netCheck) positiveInt(n *yaml.Node, path string) {
	if v, ok := intValue(n); !ok || v <= 0 {
		c.addf(path, "must be a positive number, not %s", show(n))
	}
}
