package networkconfig

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// v2Sections are the device sections cloud-init renders itself (NetworkStateInterpreter.handle_ethernets,
// handle_bonds, handle_bridges, handle_vlans, handle_wifis); any other section makes parse_config_v2 raise
// "No handler found" on images without netplan. netplanOnly are sections netplan knows, which images that hand
// the config to netplan (Ubuntu) accept; they are passed on unchecked.
var (
	v2Sections  = map[string]bool{"ethernets": true, "bonds": true, "bridges": true, "vlans": true, "wifis": true}
	netplanOnly = map[string]bool{"tunnels": true, "vrfs": true, "modems": true, "nm-devices": true,
		"dummy-devices": true, "virtual-ethernets": true}
)

// v2Parameters are the bond and bridge `parameters` cloud-init can translate (net/network_state.py
// NET_CONFIG_TO_V2): _handle_bond_bridge looks every parameter up there and raises KeyError on others.
var v2Parameters = map[string]map[string]bool{
	"bonds": set2("ad-select", "arp-interval", "arp-ip-target", "arp-validate", "down-delay",
		"fail-over-mac-policy", "lacp-rate", "mii-monitor-interval", "min-links", "mode", "gratuitous-arp",
		"gratuitious-arp", "primary", "primary-reselect-policy", "up-delay", "transmit-hash-policy"),
	"bridges": set2("ageing-time", "priority", "forward-delay", "hello-time", "max-age", "path-cost",
		"port-priority", "stp"),
}

func set2(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// v2 checks a version 2 (netplan-style) network-config.
func (c *netCheck) v2(top *yaml.Node, path string) {
	devices := map[string]bool{}
	for _, section := range []string{"ethernets", "bonds", "bridges", "vlans", "wifis"} {
		if n := yamlnode.Get(top, section); n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if name, ok := yamlnode.ScalarText(n.Content[i]); ok {
					devices[name] = true
				}
			}
		}
	}
	c.mappingEntries(top, path, func(key string, v *yaml.Node, p string) {
		switch {
		case key == "version" || netplanOnly[key]:
		case key == "renderer":
			if !nonEmptyString(v) {
				c.addf(p, "must be networkd or NetworkManager, not %s", show(v))
			}
		case v2Sections[key]:
			c.mappingEntries(v, p, func(name string, dev *yaml.Node, dp string) {
				c.v2Device(key, dev, dp, devices)
			})
		default:
			c.addf(p, "unknown section; cloud-init renders ethernets, bonds, bridges, vlans and wifis")
		}
	})
}

// v2Device checks one device of a section.
func (c *netCheck) v2Device(section string, dev *yaml.Node, path string, devices map[string]bool) {
	dev = yamlnode.Resolve(dev)
	if yamlnode.IsNull(dev) {
		return // `eth0: {}` written as `eth0:` configures nothing
	}
	if dev.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping, not %s", yamlnode.KindName(dev))
		return
	}
	c.mappingEntries(dev, path, func(key string, v *yaml.Node, p string) { c.v2Key(key, v, p) })
	switch section {
	case "bonds", "bridges":
		n := yamlnode.Get(dev, "interfaces")
		if n == nil || yamlnode.IsNull(n) {
			// handle_bond/handle_bridge iterate over the interfaces: none is a TypeError.
			c.addf(yamlnode.JoinPath(path, "interfaces"), "is required")
		} else {
			for i, name := range c.stringList(n, yamlnode.JoinPath(path, "interfaces")) {
				if !devices[name] {
					c.addf(index(yamlnode.JoinPath(path, "interfaces"), i), "names no device of this config")
				}
			}
		}
		if n := yamlnode.Get(dev, "parameters"); n != nil && !yamlnode.IsNull(n) {
			c.mappingEntries(n, yamlnode.JoinPath(path, "parameters"), func(key string, _ *yaml.Node, p string) {
				if !v2Parameters[section][key] {
					c.addf(p, "not a %s parameter cloud-init knows", strings.TrimSuffix(section, "s"))
				}
			})
		}
	case "vlans":
		if n := yamlnode.Get(dev, "id"); n == nil {
			c.addf(yamlnode.JoinPath(path, "id"), "is required")
		} else if v, ok := intValue(n); !ok || v < 0 || v > 4094 {
			c.addf(yamlnode.JoinPath(path, "id"), "must be a VLAN id from 0 to 4094, not %s", show(n))
		}
		if n := yamlnode.Get(dev, "link"); n == nil || !nonEmptyString(n) {
			c.addf(yamlnode.JoinPath(path, "link"), "is required: the device the VLAN is on")
		} else if name, _ := yamlnode.ScalarText(n); !devices[name] {
			c.addf(yamlnode.JoinPath(path, "link"), "names no device of this config")
		}
	}
}

// v2Key checks one key of a device.
func (c *netCheck) v2Key(key string, v *yaml.Node, path string) {
	switch key {
	case "dhcp4", "dhcp6", "critical", "optional", "accept-ra", "wakeonlan":
		if _, ok := boolValue(v); !ok {
			c.addf(path, "must be true or false%s", notText(v))
		}
	case "addresses":
		c.v2Addresses(v, path)
	case "gateway4", "gateway6":
		if a, ok := c.ip(v, path); ok && a.Is4() != (key == "gateway4") {
			c.addf(path, "is not an IPv%s address", strings.TrimPrefix(key, "gateway"))
		}
	case "nameservers":
		c.mappingEntries(v, path, func(k string, nv *yaml.Node, p string) {
			switch k {
			case "addresses":
				c.ipList(nv, p)
			case "search":
				c.searchList(nv, p)
			}
		})
	case "routes":
		c.v2Routes(v, path)
	case "mtu":
		c.positiveInt(v, path)
	case "match":
		c.mappingEntries(v, path, func(k string, mv *yaml.Node, p string) {
			if k == "macaddress" {
				c.mac(mv, p)
			}
		})
	case "macaddress":
		c.mac(v, path)
	case "set-name", "link":
		if !nonEmptyString(v) {
			c.addf(path, "must be a name, not %s", show(v))
		}
	}
}

// v2Addresses checks `addresses`: netplan wants each in CIDR form (address/prefix), or as a one-key mapping
// from that form to options.
func (c *netCheck) v2Addresses(v *yaml.Node, path string) {
	for i, a := range c.items(v, path, "addresses like 192.0.2.10/24") {
		a = yamlnode.Resolve(a)
		if a.Kind == yaml.MappingNode && len(a.Content) == 2 {
			a = yamlnode.Resolve(a.Content[0])
		}
		if s, ok := yamlnode.ScalarText(a); !ok || !isCIDR(s) {
			c.addf(index(path, i), "must be an address with its prefix length, like 192.0.2.10/24%s", notText(a))
		}
	}
}

func isCIDR(s string) bool {
	_, ok := cidr(s)
	return ok
}

// v2Routes checks `routes`: each needs `to` (a network or an address) and takes `via` (an address) and
// `metric`. netplan also reads `to: default`, but cloud-init 22.4 renders it only by handing the config to
// netplan (Ubuntu): on other images _normalize_route raises "Address default is not a valid ip address".
func (c *netCheck) v2Routes(v *yaml.Node, path string) {
	for i, r := range c.items(v, path, "") {
		r, rp := yamlnode.Resolve(r), index(path, i)
		if r.Kind != yaml.MappingNode {
			c.addf(rp, "must be a mapping with to and via, not %s", yamlnode.KindName(r))
			continue
		}
		to := yamlnode.Get(r, "to")
		switch s, ok := yamlnode.ScalarText(to); {
		case ok && s == "default":
			c.addf(yamlnode.JoinPath(rp, "to"), "write 0.0.0.0/0 (or ::/0): cloud-init renders `default` only on images "+
				"that use netplan")
		case to == nil || !ok || !isIPNetwork(s):
			c.addf(yamlnode.JoinPath(rp, "to"), "must be a network like 10.0.0.0/8%s", notText(to))
		}
		if via := yamlnode.Get(r, "via"); via != nil {
			c.ip(via, yamlnode.JoinPath(rp, "via"))
		}
		if m := yamlnode.Get(r, "metric"); m != nil {
			if n, ok := intValue(m); !ok || n < 0 {
				c.addf(yamlnode.JoinPath(rp, "metric"), "must be a number, not %s", show(m))
			}
		}
	}
}
