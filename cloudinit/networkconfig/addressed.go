package networkconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// Addressed is an entry of a network-config that gives static addresses: where it is, and the MAC addresses of
// the NICs it can configure.
type Addressed struct {
	Path string // e.g. network.ethernets.eth0, config[1]
	// MACs are the NICs the entry configures, matched by MAC address (normalized); nil when it is matched otherwise
	// — by name, driver, or through a member or link not matched by MAC — and so may configure any NIC: the names a
	// guest gives its NICs are not known before it boots.
	MACs []string
}

// StaticallyAddressed lists the entries of doc that give NICs static addresses: a version 1 entry with a subnet of
// type static or static6 (cloud-init's NetworkStateInterpreter), a version 2 ethernet, bond, bridge or VLAN with
// addresses (a bond's or bridge's NICs are its interfaces, a VLAN's its link's). Entries that only ask for DHCP are
// not listed. doc must have passed Validate; an empty document lists nothing.
func StaticallyAddressed(doc []byte) ([]Addressed, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(doc)).Decode(&n); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	top := yamlnode.Resolve(n.Content[0])
	path := ""
	if inner := yamlnode.Get(top, "network"); inner != nil {
		top, path = yamlnode.Resolve(inner), "network"
	}
	if top.Kind != yaml.MappingNode {
		return nil, errors.New("is not a mapping")
	}
	if v, _ := intValue(yamlnode.Get(top, "version")); v == 2 {
		return addressedV2(top, path), nil
	}
	return addressedV1(top, path), nil
}

// addressedV1 lists a version 1 document's entries with static subnets; only a physical entry is matched by its
// mac_address (a bond, bridge or VLAN names its NICs).
func addressedV1(top *yaml.Node, path string) []Addressed {
	path = yamlnode.JoinPath(path, "config")
	cfg := yamlnode.Get(top, "config")
	if cfg == nil || cfg.Kind != yaml.SequenceNode {
		return nil
	}
	var out []Addressed
	for i, e := range cfg.Content {
		e = yamlnode.Resolve(e)
		static := false
		if subnets := yamlnode.Get(e, "subnets"); subnets != nil && subnets.Kind == yaml.SequenceNode {
			for _, s := range subnets.Content {
				typ, _ := yamlnode.ScalarText(yamlnode.Get(s, "type"))
				static = static || typ == "static" || typ == "static6"
			}
		}
		if !static {
			continue
		}
		a := Addressed{Path: index(path, i)}
		typ, _ := yamlnode.ScalarText(yamlnode.Get(e, "type"))
		if mac, _ := yamlnode.ScalarText(yamlnode.Get(e, "mac_address")); typ == "physical" && normalMAC(mac) != "" {
			a.MACs = []string{normalMAC(mac)}
		}
		out = append(out, a)
	}
	return out
}

// addressedV2 lists a version 2 document's devices with addresses.
func addressedV2(top *yaml.Node, path string) []Addressed {
	devices := map[string]*yaml.Node{}
	kinds := map[string]string{}
	for _, section := range []string{"ethernets", "bonds", "bridges", "vlans"} {
		m := yamlnode.Get(top, section)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if id, ok := yamlnode.ScalarText(m.Content[i]); ok {
				devices[id], kinds[id] = yamlnode.Resolve(m.Content[i+1]), section
			}
		}
	}
	// macsOf is the MAC addresses of device id and whether all are known: an ethernet's match.macaddress, a bond's
	// or bridge's interfaces', a VLAN's link's; depth bounds a loop of links.
	var macsOf func(id string, depth int) ([]string, bool)
	macsOf = func(id string, depth int) ([]string, bool) {
		dev := devices[id]
		if dev == nil || depth > len(devices) {
			return nil, false
		}
		switch kinds[id] {
		case "ethernets":
			mac, _ := yamlnode.ScalarText(yamlnode.Get(yamlnode.Get(dev, "match"), "macaddress"))
			if normalMAC(mac) == "" {
				return nil, false
			}
			return []string{normalMAC(mac)}, true
		case "vlans":
			link, _ := yamlnode.ScalarText(yamlnode.Get(dev, "link"))
			return macsOf(link, depth+1)
		}
		members := yamlnode.Get(dev, "interfaces")
		if members == nil || members.Kind != yaml.SequenceNode || len(members.Content) == 0 {
			return nil, false
		}
		var out []string
		for _, m := range members.Content {
			name, _ := yamlnode.ScalarText(m)
			macs, ok := macsOf(name, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, macs...)
		}
		return out, true
	}
	var out []Addressed
	for _, section := range []string{"ethernets", "bonds", "bridges", "vlans"} {
		m := yamlnode.Get(top, section)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			id, _ := yamlnode.ScalarText(m.Content[i])
			addrs := yamlnode.Get(m.Content[i+1], "addresses")
			if addrs == nil || addrs.Kind != yaml.SequenceNode || len(addrs.Content) == 0 {
				continue
			}
			a := Addressed{Path: yamlnode.JoinPath(yamlnode.JoinPath(path, section), id)}
			if macs, ok := macsOf(id, 0); ok {
				a.MACs = macs
			}
			out = append(out, a)
		}
	}
	return out
}
