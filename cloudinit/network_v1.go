package cloudinit

import (
	"net/netip"
	"strings"

	"gopkg.in/yaml.v3"
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
	path = joinPath(path, "config")
	cfg := get(top, "config")
	if isNull(cfg) || cfg.Kind != yaml.SequenceNode {
		c.addf(path, "must be a list of entries (type: physical, bond, vlan, bridge, nameserver, route, ...), "+
			"not %s", kindName(cfg))
		return
	}
	g := &gateways{}
	names := map[string]bool{}
	for i, e := range cfg.Content {
		if name, ok := scalarText(get(e, "name")); ok {
			names[name] = true
		}
		c.v1Entry(resolve(e), index(path, i), g)
	}
	for i, e := range cfg.Content {
		// parse_config_v1 raises "Nameserver specified for interface X, but interface X does not exist!"
		if t, _ := scalarText(get(e, "type")); t == "nameserver" && get(e, "interface") != nil {
			if iface, _ := scalarText(get(e, "interface")); !names[iface] {
				c.addf(index(path, i)+".interface", "%q is not the name of an entry of config", iface)
			}
		}
	}
}

// gateways remembers the first gateway of each address family among static subnets.
type gateways struct{ v4, v6 string }

func (c *netCheck) v1Entry(e *yaml.Node, path string, g *gateways) {
	if e.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping with a type, not %s", kindName(e))
		return
	}
	typ, _ := scalarText(get(e, "type"))
	required, known := v1Required[typ]
	if !known {
		c.addf(joinPath(path, "type"), "must be one of physical, bond, bridge, vlan, infiniband, loopback, "+
			"nameserver, route; not %s", show(get(e, "type")))
		return
	}
	for _, k := range required {
		if v := get(e, k); v == nil || isNull(v) {
			c.addf(joinPath(path, k), "is required for type %s", typ)
		}
	}
	if n := get(e, "name"); n != nil && !nonEmptyString(n) {
		c.addf(joinPath(path, "name"), "must be an interface name, not %s", show(n))
	}
	if n := get(e, "mac_address"); n != nil {
		c.mac(n, joinPath(path, "mac_address"))
	}
	if n := get(e, "mtu"); n != nil {
		c.positiveInt(n, joinPath(path, "mtu"))
	}
	switch typ {
	case "vlan":
		if n := get(e, "vlan_id"); n != nil {
			if v, ok := intValue(n); !ok || v < 0 || v > 4094 {
				c.addf(joinPath(path, "vlan_id"), "must be a VLAN id from 0 to 4094, not %s", show(n))
			}
		}
	case "bond", "bridge":
		if n := get(e, typ+"_interfaces"); n != nil && !isNull(n) {
			c.stringList(n, joinPath(path, typ+"_interfaces"))
		}
		if n := get(e, "params"); n != nil && !isNull(n) {
			c.v1Params(n, joinPath(path, "params"), typ)
		}
	case "nameserver":
		if n := get(e, "address"); n != nil && !isNull(n) {
			c.ipList(n, joinPath(path, "address"))
		}
		c.searchList(get(e, "search"), joinPath(path, "search"))
		return
	case "route":
		c.route(e, path, "destination")
		return
	}
	if n := get(e, "subnets"); n != nil && !isNull(n) {
		for i, s := range c.items(n, joinPath(path, "subnets"), "") {
			c.v1Subnet(resolve(s), index(joinPath(path, "subnets"), i), g)
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
		if s, _ := scalarText(v); s != "0" && s != "1" {
			c.addf(p, "must be on, off, 0, 1 or a boolean, not %s", show(v))
		}
	})
}

func (c *netCheck) v1Subnet(s *yaml.Node, path string, g *gateways) {
	if s.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping with a type, not %s", kindName(s))
		return
	}
	typ, _ := scalarText(get(s, "type"))
	if !v1SubnetTypes[typ] {
		c.addf(joinPath(path, "type"), "must be one of static, static6, dhcp, dhcp4, dhcp6, manual, ipv6_slaac, "+
			"ipv6_dhcpv6-stateless, ipv6_dhcpv6-stateful; not %s", show(get(s, "type")))
		return
	}
	if typ == "static" || typ == "static6" {
		c.staticSubnet(s, path, g)
	}
	if n := get(s, "dns_nameservers"); n != nil {
		c.ipList(n, joinPath(path, "dns_nameservers"))
	}
	c.searchList(get(s, "dns_search"), joinPath(path, "dns_search"))
	if n := get(s, "routes"); n != nil && !isNull(n) {
		for i, r := range c.items(n, joinPath(path, "routes"), "") {
			c.route(resolve(r), index(joinPath(path, "routes"), i), "network", "destination")
		}
	}
}

// staticSubnet checks a static subnet: _normalize_net_keys needs `address` (or `ip_address`) to be an IP
// network. Only one IPv4 and one IPv6 gateway may be set across all static subnets: each becomes a default
// route, and two default routes of one family make the renderers write conflicting ones.
func (c *netCheck) staticSubnet(s *yaml.Node, path string, g *gateways) {
	key := "address"
	if get(s, key) == nil && get(s, "ip_address") != nil {
		key = "ip_address"
	}
	addrNode := get(s, key)
	var addr netip.Addr
	if addrNode == nil || isNull(addrNode) {
		c.addf(joinPath(path, "address"), "is required for a static subnet")
	} else {
		v, _ := scalarText(addrNode)
		var ok bool
		if addr, ok = ipNetwork(v); !ok {
			c.addf(joinPath(path, key), "must be an IP address, optionally with /prefix, not %s", show(addrNode))
		}
	}
	if n := get(s, "netmask"); n != nil && !isNull(n) {
		if v, _ := scalarText(n); !(ipv4Mask(v) || addr.Is6()) {
			c.addf(joinPath(path, "netmask"), "must be a netmask like 255.255.255.0, not %s", show(n))
		}
	}
	if n := get(s, "prefix"); n != nil {
		if v, ok := intValue(n); !ok || v < 0 || v > 128 {
			c.addf(joinPath(path, "prefix"), "must be a prefix length, not %s", show(n))
		}
	}
	n := get(s, "gateway")
	if n == nil || isNull(n) {
		return
	}
	gw, ok := c.ip(n, joinPath(path, "gateway"))
	if !ok {
		return
	}
	first := &g.v4
	if gw.Is6() {
		first = &g.v6
	}
	if *first != "" {
		c.addf(joinPath(path, "gateway"), "a second default gateway of the same address family (the first is "+
			"%s); keep one and use routes for other networks", *first)
		return
	}
	*first = joinPath(path, "gateway")
}

// route checks a route: one of keys names the destination network (_normalize_route), gateway and metric are
// optional.
func (c *netCheck) route(r *yaml.Node, path string, keys ...string) {
	if r.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping, not %s", kindName(r))
		return
	}
	found := false
	for _, k := range keys {
		if n := get(r, k); n != nil && !isNull(n) {
			found = true
			if v, _ := scalarText(n); !isIPNetwork(v) {
				c.addf(joinPath(path, k), "must be a network like 10.0.0.0/8, not %s", show(n))
			}
			break
		}
	}
	if !found {
		c.addf(joinPath(path, keys[0]), "is required")
	}
	if n := get(r, "gateway"); n != nil && !isNull(n) {
		c.ip(n, joinPath(path, "gateway"))
	}
	if n := get(r, "metric"); n != nil && !isNull(n) {
		if v, ok := intValue(n); !ok || v < 0 {
			c.addf(joinPath(path, "metric"), "must be a number, not %s", show(n))
		}
	}
}

func isIPNetwork(s string) bool {
	_, ok := ipNetwork(s)
	return ok
}

// searchList checks DNS search domains: a list of names or a white-space separated string.
func (c *netCheck) searchList(n *yaml.Node, path string) {
	if n == nil || isNull(n) || n.Kind == yaml.ScalarNode {
		return
	}
	for i, e := range c.items(n, path, "domains") {
		if s, ok := scalarText(e); !ok || strings.TrimSpace(s) == "" {
			c.addf(index(path, i), "must be a domain, not %s", show(e))
		}
	}
}
