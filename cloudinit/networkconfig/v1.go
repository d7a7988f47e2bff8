package networkconfig

import (
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// v1Required are the keys each version 1 config entry type must have: the handlers of
// NetworkStateInterpreter and their @ensure_command_keys (cloudinit/net/network_state.py). An entry of another
// type makes parse_config_v1 raise "No handler found".
var v1Required = map[string][]string{
	"physical":   {"name"},
	"loopback":   {"name"},
	"infiniband": {"name"},
	"vlan":       {"name", "vlan_id", "vlan_link"},
	"bond":       {"name", "bond_interfaces", "params"},
	"bridge":     {"name", "bridge_interfaces"},
	"nameserver": {"address"},
	"route":      {"destination"},
}

// v1SubnetTypes are the subnet types the renderers handle (net/sysconfig.py, eni.py, netplan.py,
// net.IPV6_DYNAMIC_TYPES).
var v1SubnetTypes = map[string]bool{
	"static": true, "static6": true, "dhcp": true, "dhcp4": true, "dhcp6": true, "manual": true,
	"ipv6_slaac": true, "ipv6_dhcpv6-stateless": true, "ipv6_dhcpv6-stateful": true,
}

// v1 checks a version 1 network-config: `config` is a list of typed entries.
func (c *netCheck) v1(top *yaml.Node, path string) {
	path = yamlnode.JoinPath(path, "config")
	cfg := yamlnode.Get(top, "config")
	if yamlnode.IsNull(cfg) || cfg.Kind != yaml.SequenceNode {
		c.addf(path, "must be a list of entries (type: physical, bond, vlan, bridge, nameserver, route, ...), "+
			"not %s", yamlnode.KindName(cfg))
		return
	}
	g := &gateways{}
	names := map[string]bool{}
	for i, e := range cfg.Content {
		if name, ok := yamlnode.ScalarText(yamlnode.Get(e, "name")); ok {
			names[name] = true
		}
		c.v1Entry(yamlnode.Resolve(e), index(path, i), g)
	}
	for i, e := range cfg.Content {
		// parse_config_v1 raises "Nameserver specified for interface X, but interface X does not exist!"
		if t, _ := yamlnode.ScalarText(yamlnode.Get(e, "type")); t == "nameserver" && yamlnode.Get(e, "interface") != nil {
			if iface, _ := yamlnode.ScalarText(yamlnode.Get(e, "interface")); !names[iface] {
				c.addf(index(path, i)+".interface", "names no entry of config")
			}
		}
	}
}

// gateways remembers the first gateway of each address family among static subnets.
type gateways struct{ v4, v6 string }

func (c *netCheck) v1Entry(e *yaml.Node, path string, g *gateways) {
	if e.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping with a type, not %s", yamlnode.KindName(e))
		return
	}
	typ, _ := yamlnode.ScalarText(yamlnode.Get(e, "type"))
	required, known := v1Required[typ]
	if !known {
		c.addf(yamlnode.JoinPath(path, "type"), "must be one of physical, bond, bridge, vlan, infiniband, loopback, "+
			"nameserver, route%s", notText(yamlnode.Get(e, "type")))
		return
	}
	for _, k := range required {
		if v := yamlnode.Get(e, k); v == nil || yamlnode.IsNull(v) {
			c.addf(yamlnode.JoinPath(path, k), "is required for type %s", typ)
		}
	}
	if n := yamlnode.Get(e, "name"); n != nil && !nonEmptyString(n) {
		c.addf(yamlnode.JoinPath(path, "name"), "must be an interface name, not %s", show(n))
	}
	if n := yamlnode.Get(e, "mac_address"); n != nil {
		c.mac(n, yamlnode.JoinPath(path, "mac_address"))
	}
	if n := yamlnode.Get(e, "mtu"); n != nil {
		c.positiveInt(n, yamlnode.JoinPath(path, "mtu"))
	}
	switch typ {
	case "vlan":
		if n := yamlnode.Get(e, "vlan_id"); n != nil {
			if v, ok := intValue(n); !ok || v < 0 || v > 4094 {
				c.addf(yamlnode.JoinPath(path, "vlan_id"), "must be a VLAN id from 0 to 4094, not %s", show(n))
			}
		}
	case "bond", "bridge":
		if n := yamlnode.Get(e, typ+"_interfaces"); n != nil && !yamlnode.IsNull(n) {
			c.stringList(n, yamlnode.JoinPath(path, typ+"_interfaces"))
		}
		if n := yamlnode.Get(e, "params"); n != nil && !yamlnode.IsNull(n) {
			c.v1Params(n, yamlnode.JoinPath(path, "params"), typ)
		}
	case "nameserver":
		if n := yamlnode.Get(e, "address"); n != nil && !yamlnode.IsNull(n) {
			c.ipList(n, yamlnode.JoinPath(path, "address"))
		}
		c.searchList(yamlnode.Get(e, "search"), yamlnode.JoinPath(path, "search"))
		return
	case "route":
		c.route(e, path, "destination")
		return
	}
	if n := yamlnode.Get(e, "subnets"); n != nil && !yamlnode.IsNull(n) {
		for i, s := range c.items(n, yamlnode.JoinPath(path, "subnets"), "") {
			c.v1Subnet(yamlnode.Resolve(s), index(yamlnode.JoinPath(path, "subnets"), i), g)
		}
	}
}

// v1Params checks bond or bridge params. handle_bridge raises on a bridge_stp other than on/off/0/1/boolean.
func (c *netCheck) v1Params(n *yaml.Node, path, typ string) {
	c.mappingEntries(n, path, func(key string, v *yaml.Node, p string) {
		if typ != "bridge" || key != "bridge_stp" {
			return
		}
		if _, ok := boolValue(v); ok {
			return
		}
		if s, _ := yamlnode.ScalarText(v); s != "0" && s != "1" {
			c.addf(p, "must be on, off, 0, 1 or a boolean%s", notText(v))
		}
	})
}

func (c *netCheck) v1Subnet(s *yaml.Node, path string, g *gateways) {
	if s.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping with a type, not %s", yamlnode.KindName(s))
		return
	}
	typ, _ := yamlnode.ScalarText(yamlnode.Get(s, "type"))
	if !v1SubnetTypes[typ] {
		c.addf(yamlnode.JoinPath(path, "type"), "must be one of static, static6, dhcp, dhcp4, dhcp6, manual, ipv6_slaac, "+
			"ipv6_dhcpv6-stateless, ipv6_dhcpv6-stateful%s", notText(yamlnode.Get(s, "type")))
		return
	}
	if typ == "static" || typ == "static6" {
		c.staticSubnet(s, path, g)
	}
	if n := yamlnode.Get(s, "dns_nameservers"); n != nil {
		c.ipList(n, yamlnode.JoinPath(path, "dns_nameservers"))
	}
	c.searchList(yamlnode.Get(s, "dns_search"), yamlnode.JoinPath(path, "dns_search"))
	if n := yamlnode.Get(s, "routes"); n != nil && !yamlnode.IsNull(n) {
		for i, r := range c.items(n, yamlnode.JoinPath(path, "routes"), "") {
			c.route(yamlnode.Resolve(r), index(yamlnode.JoinPath(path, "routes"), i), "network", "destination")
		}
	}
}

// staticSubnet checks a static subnet: _normalize_net_keys needs `address` (or `ip_address`) to be an IP
// network. Only one IPv4 and one IPv6 gateway may be set across all static subnets: each becomes a default
// route, and two default routes of one family make the renderers write conflicting ones.
func (c *netCheck) staticSubnet(s *yaml.Node, path string, g *gateways) {
	key := "address"
	if yamlnode.Get(s, key) == nil && yamlnode.Get(s, "ip_address") != nil {
		key = "ip_address"
	}
	addrNode := yamlnode.Get(s, key)
	var addr netip.Addr
	if addrNode == nil || yamlnode.IsNull(addrNode) {
		c.addf(yamlnode.JoinPath(path, "address"), "is required for a static subnet")
	} else {
		v, _ := yamlnode.ScalarText(addrNode)
		var ok bool
		if addr, ok = ipNetwork(v); !ok {
			c.addf(yamlnode.JoinPath(path, key), "must be an IP address, optionally with /prefix%s", notText(addrNode))
		}
	}
	if n := yamlnode.Get(s, "netmask"); n != nil && !yamlnode.IsNull(n) {
		if v, _ := yamlnode.ScalarText(n); !(ipv4Mask(v) || addr.Is6()) {
			c.addf(yamlnode.JoinPath(path, "netmask"), "must be a netmask like 255.255.255.0%s", notText(n))
		}
	}
	if n := yamlnode.Get(s, "prefix"); n != nil {
		if v, ok := intValue(n); !ok || v < 0 || v > 128 {
			c.addf(yamlnode.JoinPath(path, "prefix"), "must be a prefix length, not %s", show(n))
		}
	}
	n := yamlnode.Get(s, "gateway")
	if n == nil || yamlnode.IsNull(n) {
		return
	}
	gw, ok := c.ip(n, yamlnode.JoinPath(path, "gateway"))
	if !ok {
		return
	}
	first := &g.v4
	if gw.Is6() {
		first = &g.v6
	}
	if *first != "" {
		c.addf(yamlnode.JoinPath(path, "gateway"), "a second default gateway of the same address family (the first is "+
			"%s); keep one and use routes for other networks", *first)
		return
	}
	*first = yamlnode.JoinPath(path, "gateway")
}

// route checks a route: one of keys names the destination network (_normalize_route), gateway and metric are
// optional.
func (c *netCheck) route(r *yaml.Node, path string, keys ...string) {
	if r.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping, not %s", yamlnode.KindName(r))
		return
	}
	found := false
	for _, k := range keys {
		if n := yamlnode.Get(r, k); n != nil && !yamlnode.IsNull(n) {
			found = true
			if v, _ := yamlnode.ScalarText(n); !isIPNetwork(v) {
				c.addf(yamlnode.JoinPath(path, k), "must be a network like 10.0.0.0/8%s", notText(n))
			}
			break
		}
	}
	if !found {
		c.addf(yamlnode.JoinPath(path, keys[0]), "is required")
	}
	if n := yamlnode.Get(r, "gateway"); n != nil && !yamlnode.IsNull(n) {
		c.ip(n, yamlnode.JoinPath(path, "gateway"))
	}
	if n := yamlnode.Get(r, "metric"); n != nil && !yamlnode.IsNull(n) {
		if v, ok := intValue(n); !ok || v < 0 {
			c.addf(yamlnode.JoinPath(path, "metric"), "must be a number, not %s", show(n))
		}
	}
}

func isIPNetwork(s string) bool {
	_, ok := ipNetwork(s)
	return ok
}

// searchList checks DNS search domains: a list of names or a white-space separated string.
func (c *netCheck) searchList(n *yaml.Node, path string) {
	if n == nil || yamlnode.IsNull(n) || n.Kind == yaml.ScalarNode {
		return
	}
	for i, e := range c.items(n, path, "domains") {
		if s, ok := yamlnode.ScalarText(e); !ok || strings.TrimSpace(s) == "" {
			c.addf(index(path, i), "must be a domain, not %s", show(e))
		}
	}
}
