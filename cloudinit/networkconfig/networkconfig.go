// Package networkconfig checks a cloud-init network-config (version 1 or 2) the way cloud-init 22.4 reads it,
// and returns every problem with the path of the field at fault. It is pure: it reads only the document.
package networkconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// maxShown is how many problems an Error's text lists.
const maxShown = 5

// Problem is one thing wrong in a network-config: where (a path such as network.config[1].subnets[0].type; ""
// for the document as a whole) and what.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Error is what Validate found wrong in a network-config. It says nothing of where the document came from: the
// caller knows which input it read.
type Error struct {
	Problems []Problem
}

// Error lists the first problems, and how many more there are.
func (e *Error) Error() string {
	list := e.Problems
	more := ""
	if len(list) > maxShown {
		more = fmt.Sprintf("; and %d more", len(list)-maxShown)
		list = list[:maxShown]
	}
	texts := make([]string, len(list))
	for i, p := range list {
		texts[i] = p.String()
	}
	return strings.Join(texts, "; ") + more
}

// Validate checks a cloud-init network-config (version 1 or 2, with or without a top-level `network:` key). Every
// problem is returned in an *Error, each naming the field at fault, e.g. network.config[1].subnets[0].type. It
// checks what cloud-init 22.4's NetworkStateInterpreter (cloudinit/net/network_state.py) and the renderers need,
// and that addresses, gateways and MAC addresses parse; the document is used unchanged. Empty data is valid
// (cloud-init then falls back to DHCP on the first NIC).
func Validate(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil // comments only
	} else if err != nil {
		return document("not valid YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return document("holds more than one YAML document; cloud-init reads one")
	}
	if err := yamlnode.CheckTree(&doc, yamlnode.NewWalker()); err != nil {
		return document(err.Error())
	}
	c := &netCheck{}
	c.document(doc.Content[0])
	if len(c.problems) == 0 {
		return nil
	}
	return &Error{Problems: c.problems}
}

// document is an Error about the document as a whole.
func document(msg string) error { return &Error{Problems: []Problem{{Message: msg}}} }

// IsNetworkData reports whether b parses as a YAML (or JSON) mapping, the shape of every cloud-init
// network-config: the check userdata.DecodeBase64OrPlain needs to tell base64 from a literal document.
func IsNetworkData(b []byte) bool { return yamlnode.IsMapping(b) }

// netCheck collects the problems of one network-config.
type netCheck struct{ problems []Problem }

func (c *netCheck) addf(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// document checks the top level. cloud-init drops a top-level `network` key
// (stages.Init._remove_top_level_network_key) and treats `config: disabled` as "configure nothing"
// (net.is_disabled_cfg).
func (c *netCheck) document(top *yaml.Node) {
	top = yamlnode.Resolve(top)
	if top.Kind != yaml.MappingNode {
		c.addf("", "must be a mapping with a version key, not %s", yamlnode.KindName(top))
		return
	}
	path := ""
	if n := yamlnode.Get(top, "network"); n != nil {
		path = "network"
		if top = n; top.Kind != yaml.MappingNode {
			c.addf(path, "must be a mapping with a version key, not %s", yamlnode.KindName(top))
			return
		}
	}
	if s, ok := yamlnode.ScalarText(yamlnode.Get(top, "config")); ok && s == "disabled" {
		return
	}
	version := yamlnode.Get(top, "version")
	// parse_net_config_data compares the version with the integers 1 and 2: "1" would configure nothing.
	switch v, ok := intValue(version); {
	case version != nil && version.ShortTag() != yamlnode.TagInt:
		c.addf(yamlnode.JoinPath(path, "version"), "must be the number 1 or 2, not %s", show(version))
	case version == nil:
		c.addf(yamlnode.JoinPath(path, "version"), "is required (1 or 2)")
	case !ok || (v != 1 && v != 2):
		c.addf(yamlnode.JoinPath(path, "version"), "must be the number 1 or 2, not %s", show(version))
	case v == 1:
		c.v1(top, path)
	default:
		c.v2(top, path)
	}
}

// maxShownNumber is the longest number or boolean a problem shows as written.
const maxShownNumber = 6

// show describes a value for a problem without repeating any text of it: a value may be a credential pasted in
// the wrong place, and problems reach Rancher's UI and logs. A short number or boolean is shown as written
// (5000, true, "1"); anything else by what it is: "a string", "a blank string", "a number", "a list", "a mapping",
// "empty".
func show(n *yaml.Node) string {
	s, ok := yamlnode.ScalarText(n)
	if !ok || yamlnode.IsNull(n) {
		return yamlnode.KindName(n)
	}
	switch yamlnode.Resolve(n).ShortTag() {
	case yamlnode.TagStr:
		if strings.TrimSpace(s) == "" {
			return "a blank string"
		}
		if _, err := strconv.Atoi(s); err == nil && len(s) <= maxShownNumber {
			return strconv.Quote(s) // a quoted number: "1" for version
		}
		return "a string"
	case yamlnode.TagInt, yamlnode.TagBool, "!!float":
		if len(s) <= maxShownNumber {
			return s
		}
		return "a number"
	}
	return yamlnode.KindName(n)
}

// notText is ", not <what n is>" for a problem with a value that should be text of some form (an address, a
// name, a keyword), and "" when n is text: the path already says which value is wrong, and text is not repeated
// (see show).
func notText(n *yaml.Node) string {
	if s, ok := yamlnode.ScalarText(n); ok && !yamlnode.IsNull(n) && strings.TrimSpace(s) != "" &&
		yamlnode.Resolve(n).ShortTag() == yamlnode.TagStr {
		return ""
	}
	return ", not " + show(n)
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// intValue reads an integer scalar, or a string of digits (PyYAML reads `"100"` as a string and cloud-init
// passes it on, so both end up in the rendered files alike).
func intValue(n *yaml.Node) (int, bool) {
	s, ok := yamlnode.ScalarText(n)
	if !ok || (yamlnode.Resolve(n).ShortTag() != yamlnode.TagInt && yamlnode.Resolve(n).ShortTag() != yamlnode.TagStr) {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	return v, err == nil
}

// boolValue reads a boolean, including YAML 1.1's yes/no/on/off, which PyYAML reads as booleans (not y/n).
func boolValue(n *yaml.Node) (bool, bool) {
	s, ok := yamlnode.ScalarText(n)
	if !ok || (yamlnode.Resolve(n).ShortTag() != yamlnode.TagBool && yamlnode.Resolve(n).ShortTag() != yamlnode.TagStr) {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	return false, false
}

// nonEmptyString reports whether n is a scalar other than null with some text.
func nonEmptyString(n *yaml.Node) bool {
	s, ok := yamlnode.ScalarText(n)
	return ok && !yamlnode.IsNull(n) && strings.TrimSpace(s) != ""
}

// items returns the entries of list n, or reports that n is not a list (of what, if what is given).
func (c *netCheck) items(n *yaml.Node, path, what string) []*yaml.Node {
	if n = yamlnode.Resolve(n); n.Kind == yaml.SequenceNode {
		return n.Content
	}
	if what != "" {
		what = " of " + what
	}
	c.addf(path, "must be a list%s, not %s", what, yamlnode.KindName(n))
	return nil
}

// stringList checks that n is a list of non-empty strings and returns them.
func (c *netCheck) stringList(n *yaml.Node, path string) []string {
	var out []string
	for i, e := range c.items(n, path, "") {
		if !nonEmptyString(e) {
			c.addf(index(path, i), "must be a name, not %s", show(e))
			continue
		}
		s, _ := yamlnode.ScalarText(e)
		out = append(out, s)
	}
	return out
}

// mappingEntries calls fn for each key of mapping n, in order.
func (c *netCheck) mappingEntries(n *yaml.Node, path string, fn func(key string, v *yaml.Node, path string)) {
	n = yamlnode.Resolve(n)
	if n.Kind != yaml.MappingNode {
		c.addf(path, "must be a mapping, not %s", yamlnode.KindName(n))
		return
	}
	ps, err := yamlnode.Pairs(n, yamlnode.NewWalker())
	if err != nil {
		c.addf(path, "%s", err)
		return
	}
	for _, p := range ps {
		k, ok := yamlnode.ScalarText(p[0])
		if !ok {
			c.addf(path, "has a key that is not a name")
			continue
		}
		fn(k, p[1], yamlnode.JoinPath(path, k))
	}
}
