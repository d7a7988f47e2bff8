package networkconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// Static is one NIC given static addresses, found in the guest by its MAC address: the entry the driver adds for
// an address it allocated. With DHCP4 it is instead the entry of a NIC that takes its address by DHCP: a lease
// Harvester's managed DHCP holds for its MAC address.
type Static struct {
	ID          string         // the entry's name under ethernets; another name is used when the document has it
	MAC         string         // the NIC's MAC address
	Addresses   []netip.Prefix // each address with the prefix length of its subnet, e.g. 192.0.2.10/24
	DHCP4       bool           // the NIC asks for its IPv4 address by DHCP (dhcp4: true)
	Gateways    []netip.Addr   // default routes, one per address family at most
	Nameservers []netip.Addr
	// Search are the DNS search domains (nameservers.search), e.g. example.com. They need Nameservers:
	// cloud-init 22.4 skips a v2 nameservers block without addresses, with a warning, and the NIC's whole entry
	// with it (cloudinit/net/network_state.py, _v2_common → handle_nameserver requires address).
	Search []string
}

// entry renders s as a version 2 ethernets entry. The default route is written as `to: 0.0.0.0/0` (`::/0`), not
// `to: default` nor the deprecated gateway4/gateway6: cloud-init 22.4 renders `default` only on netplan images
// (see v2Routes), and netplan warns about gateway4.
func (s Static) entry() *yaml.Node {
	m := yamlnode.Map()
	match := yamlnode.Map()
	yamlnode.Set(match, "macaddress", yamlnode.Str(normalMAC(s.MAC)))
	yamlnode.Set(m, "match", match)
	if s.DHCP4 {
		yamlnode.Set(m, "dhcp4", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	if len(s.Addresses) > 0 {
		yamlnode.Set(m, "addresses", strSeq(stringsOf(s.Addresses)))
	}
	if len(s.Gateways) > 0 {
		routes := yamlnode.Seq()
		for _, gw := range s.Gateways {
			to := "0.0.0.0/0"
			if gw.Is6() {
				to = "::/0"
			}
			r := yamlnode.Map()
			yamlnode.Set(r, "to", yamlnode.Str(to))
			yamlnode.Set(r, "via", yamlnode.Str(gw.String()))
			routes.Content = append(routes.Content, r)
		}
		yamlnode.Set(m, "routes", routes)
	}
	if len(s.Nameservers) > 0 {
		ns := yamlnode.Map()
		yamlnode.Set(ns, "addresses", strSeq(stringsOf(s.Nameservers)))
		if len(s.Search) > 0 {
			yamlnode.Set(ns, "search", strSeq(s.Search))
		}
		yamlnode.Set(m, "nameservers", ns)
	}
	return m
}

// strSeq renders values as a YAML sequence of strings.
func strSeq(values []string) *yaml.Node {
	seq := yamlnode.Seq()
	for _, v := range values {
		seq.Content = append(seq.Content, yamlnode.Str(v))
	}
	return seq
}

// stringsOf renders each of xs with its String method.
func stringsOf[T fmt.Stringer](xs []T) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, x.String())
	}
	return out
}

// staticV2 returns a version 2 network-config that configures s and nothing else (without a top-level `network:`
// key, which cloud-init before 22.3 does not strip from NoCloud's network-config).
func staticV2(s Static) ([]byte, error) {
	top := yamlnode.Map()
	yamlnode.Set(top, "version", &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlnode.TagInt, Value: "2"})
	eth := yamlnode.Map()
	yamlnode.Set(eth, s.ID, s.entry())
	yamlnode.Set(top, "ethernets", eth)
	return yamlnode.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}})
}

// StaticConflict is why a user's network-config cannot take a Static entry.
type StaticConflict int

const (
	// ConflictVersion1: the document is version 1, to which nothing is added.
	ConflictVersion1 StaticConflict = iota + 1
	// ConflictDisabled: the document says `config: disabled`, so cloud-init configures no network at all.
	ConflictDisabled
	// ConflictUnmatched: ethernets entries without match.macaddress, which could configure the Static's NIC too.
	ConflictUnmatched
	// ConflictSameMAC: an ethernets entry matches the Static's MAC address: the document configures that NIC.
	ConflictSameMAC
)

// StaticError says why AddStatic or CheckStatic refused: the conflict and the ethernets entries at fault.
type StaticError struct {
	Conflict StaticConflict
	Entries  []string // paths of the entries at fault, e.g. network.ethernets.eth0
}

func (e *StaticError) Error() string {
	switch e.Conflict {
	case ConflictVersion1:
		return "is a version 1 network-config; a static address can only be added to version 2"
	case ConflictDisabled:
		return "disables networking (config: disabled)"
	case ConflictUnmatched:
		verb := " is"
		if len(e.Entries) > 1 {
			verb = " are"
		}
		return strings.Join(e.Entries, ", ") + verb + " not matched by macaddress"
	default:
		return fmt.Sprintf("%s already configures the NIC of that MAC address", strings.Join(e.Entries, ", "))
	}
}

// CheckStatic reports whether a Static entry for the NIC with MAC address mac could be added to doc (see
// AddStatic); mac "" means not known yet, and skips that one check. doc must have passed Validate.
func CheckStatic(doc []byte, mac string) error {
	_, _, err := staticTarget(doc, mac)
	return err
}

// AddStatic adds s to the user's version 2 network-config doc and returns the result; with an empty doc it is a
// document of s alone. The rule: the user's document stays as written, and s goes under ethernets, unless the
// document could configure the same NIC — then it is refused with a *StaticError: a version 1 document (nothing
// is merged into it), `config: disabled`, an ethernets entry that is not matched by macaddress (netplan and
// cloud-init match it by name, and the name the guest gives the NIC is not known here), or one matching s.MAC.
// doc must have passed Validate.
func AddStatic(doc []byte, s Static) ([]byte, error) {
	if len(s.Search) > 0 && len(s.Nameservers) == 0 {
		return nil, errors.New("DNS search domains need DNS servers: cloud-init 22.4 skips a nameservers entry without addresses")
	}
	root, eth, err := staticTarget(doc, s.MAC)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return staticV2(s)
	}
	id := s.ID
	for i := 2; yamlnode.Lookup(eth, id) >= 0; i++ {
		id = fmt.Sprintf("%s-%d", s.ID, i)
	}
	yamlnode.Set(eth, id, s.entry())
	if top := root.Content[0]; top.Style&yaml.FlowStyle != 0 {
		blockStyle(top) // a JSON document: written as YAML in block style, which reads better
	}
	return yamlnode.Encode(root)
}

// blockStyle drops flow style from n and everything below it.
func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// staticTarget reads doc and returns its root and its ethernets mapping (made when missing), or why s cannot go
// there. An empty document returns nils.
func staticTarget(doc []byte, mac string) (root, eth *yaml.Node, err error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil, nil
	}
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(doc)).Decode(&n); errors.Is(err, io.EOF) {
		return nil, nil, nil // comments only
	} else if err != nil {
		return nil, nil, fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	top := yamlnode.Resolve(n.Content[0])
	path := ""
	if inner := yamlnode.Get(top, "network"); inner != nil {
		top, path = inner, "network"
	}
	if top.Kind != yaml.MappingNode {
		return nil, nil, errors.New("is not a mapping")
	}
	if s, ok := yamlnode.ScalarText(yamlnode.Get(top, "config")); ok && s == "disabled" {
		return nil, nil, &StaticError{Conflict: ConflictDisabled}
	}
	if v, _ := intValue(yamlnode.Get(top, "version")); v != 2 {
		return nil, nil, &StaticError{Conflict: ConflictVersion1}
	}
	eth = yamlnode.Get(top, "ethernets")
	if eth == nil || yamlnode.IsNull(eth) {
		eth = yamlnode.Map()
		if i := yamlnode.Lookup(top, "ethernets"); i >= 0 {
			top.Content[i+1] = eth
		} else {
			yamlnode.Set(top, "ethernets", eth)
		}
	}
	if eth.Kind != yaml.MappingNode {
		return nil, nil, errors.New("ethernets is not a mapping")
	}
	want := normalMAC(mac)
	var unmatched, same []string
	for i := 0; i+1 < len(eth.Content); i += 2 {
		id, _ := yamlnode.ScalarText(eth.Content[i])
		entryPath := yamlnode.JoinPath(yamlnode.JoinPath(path, "ethernets"), id)
		got, _ := yamlnode.ScalarText(yamlnode.Get(yamlnode.Get(eth.Content[i+1], "match"), "macaddress"))
		switch got = normalMAC(got); {
		case got == "":
			unmatched = append(unmatched, entryPath)
		case want != "" && got == want:
			same = append(same, entryPath)
		}
	}
	switch {
	case len(same) > 0:
		return nil, nil, &StaticError{Conflict: ConflictSameMAC, Entries: same}
	case len(unmatched) > 0:
		return nil, nil, &StaticError{Conflict: ConflictUnmatched, Entries: unmatched}
	}
	return &n, eth, nil
}

// normalMAC is a MAC address in lowercase colon form, "" when s is none.
func normalMAC(s string) string {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil {
		return ""
	}
	return hw.String()
}
