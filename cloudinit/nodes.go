package cloudinit

import (
	"errors"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"
)

// YAML tags as yaml.v3 reports them (Node.ShortTag).
const (
	tagStr   = "!!str"
	tagBool  = "!!bool"
	tagInt   = "!!int"
	tagNull  = "!!null"
	tagMerge = "!!merge"
)

// maxVisits bounds the work spent following aliases: YAML aliases can make a small document stand for an
// exponentially large tree ("billion laughs"), and every walk here counts its steps against this budget.
const maxVisits = 1 << 20

var (
	errAliasCycle = errors.New("an alias refers to a node that contains it")
	errTooLarge   = errors.New("the document's aliases expand to more than a million nodes")
)

// walker follows aliases with a step budget and refuses cycles (yaml.v3 lets `a: &x [*x]` parse).
type walker struct {
	left   int
	onPath map[*yaml.Node]bool
}

func newWalker() *walker { return &walker{left: maxVisits, onPath: map[*yaml.Node]bool{}} }

// enter resolves n, spends one step and marks the resolved node as being visited; leave unmarks it.
func (w *walker) enter(n *yaml.Node) (*yaml.Node, error) {
	n = resolve(n)
	if w.left--; w.left < 0 {
		return nil, errTooLarge
	}
	if n != nil && len(n.Content) > 0 {
		if w.onPath[n] {
			return nil, errAliasCycle
		}
		w.onPath[n] = true
	}
	return n, nil
}

func (w *walker) leave(n *yaml.Node) {
	if n != nil {
		delete(w.onPath, n)
	}
}

// checkTree walks all of n through its aliases, failing on an alias cycle or an expansion over the budget.
func checkTree(n *yaml.Node, w *walker) error {
	r, err := w.enter(n)
	if err != nil || r == nil {
		return err
	}
	defer w.leave(r)
	for _, c := range r.Content {
		if err := checkTree(c, w); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or a YAML null.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull)
}

// scalarText returns the value of a scalar (through aliases).
func scalarText(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// plainSafe matches strings that read back as the same string in YAML 1.1 (PyYAML, which cloud-init uses) and
// 1.2 when written plain. Anything else the driver writes is double-quoted: yaml.v3 only quotes what YAML 1.2
// would misread, so it would write `1:30` or `on` plain, and PyYAML would read an integer or a boolean.
var plainSafe = regexp.MustCompile(`^[A-Za-z/]([A-Za-z0-9._/ +=@-]*[A-Za-z0-9._/+=@-])?$`)

// yaml11Words are the YAML 1.1 booleans and nulls that plainSafe would let through.
var yaml11Words = regexp.MustCompile(`^(?i:y|n|yes|no|on|off|true|false|null)$`)

// strNode is a string the driver writes.
func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: s}
	if !plainSafe.MatchString(s) || yaml11Words.MatchString(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func boolNode(v bool) *yaml.Node {
	s := "false"
	if v {
		s = "true"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagBool, Value: s}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func strSeq(items ...string) *yaml.Node {
	n := seqNode()
	for _, s := range items {
		n.Content = append(n.Content, strNode(s))
	}
	return n
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// set appends key: value to mapping m.
func set(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, strNode(key), value)
}

// lookup returns the index in m.Content of key's key node, or -1. Merge keys (<<) are not followed.
func lookup(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, ok := scalarText(m.Content[i]); ok && k == key && !isMergeKey(m.Content[i]) {
			return i
		}
	}
	return -1
}

// get returns key's value in mapping m (through an alias), or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m = resolve(m); m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	if i := lookup(m, key); i >= 0 {
		return resolve(m.Content[i+1])
	}
	return nil
}

// remove deletes key from mapping m and returns its value node, or nil.
func remove(m *yaml.Node, key string) *yaml.Node {
	i := lookup(m, key)
	if i < 0 {
		return nil
	}
	v := m.Content[i+1]
	m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
	return v
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == tagMerge || (k.Style == 0 && k.Tag == ""))
}

// pairs returns mapping m's key/value pairs with YAML merge keys (`<<: *base`) expanded, as PyYAML's loader
// expands them: keys written in m win over merged ones, and an earlier mapping in a `<<` list wins over a
// later one. Merged pairs take the place of the `<<` key.
func pairs(m *yaml.Node, w *walker) ([][2]*yaml.Node, error) {
	explicit := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, ok := scalarText(m.Content[i]); ok && !isMergeKey(m.Content[i]) {
			explicit[k] = true
		}
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !isMergeKey(k) {
			out = append(out, [2]*yaml.Node{k, v})
			continue
		}
		sources := []*yaml.Node{v}
		if rv := resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
			sources = rv.Content
		}
		for _, s := range sources {
			rs, err := w.enter(s)
			if err != nil {
				return nil, err
			}
			if rs == nil || rs.Kind != yaml.MappingNode {
				w.leave(rs)
				return nil, errors.New("a merge key (<<) must name a mapping")
			}
			sub, err := pairs(rs, w)
			w.leave(rs)
			if err != nil {
				return nil, err
			}
			for _, p := range sub {
				name, ok := scalarText(p[0])
				if !ok || explicit[name] || seen[name] {
					continue
				}
				seen[name] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// equal reports whether a and b are the same YAML data: aliases resolved, styles and comments ignored, mapping
// order ignored.
func equal(a, b *yaml.Node, w *walker) (bool, error) {
	ra, err := w.enter(a)
	if err != nil {
		return false, err
	}
	defer w.leave(ra)
	rb := resolve(b)
	if ra == nil || rb == nil {
		return ra == rb, nil
	}
	if ra.Kind != rb.Kind {
		return false, nil
	}
	switch ra.Kind {
	case yaml.ScalarNode:
		return ra.ShortTag() == rb.ShortTag() && ra.Value == rb.Value, nil
	case yaml.SequenceNode, yaml.DocumentNode:
		if len(ra.Content) != len(rb.Content) {
			return false, nil
		}
		for i := range ra.Content {
			if ok, err := equal(ra.Content[i], rb.Content[i], w); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	case yaml.MappingNode:
		return equalMappings(ra, rb, w)
	}
	return false, nil
}

func equalMappings(a, b *yaml.Node, w *walker) (bool, error) {
	pa, err := pairs(a, w)
	if err != nil {
		return false, err
	}
	pb, err := pairs(b, w)
	if err != nil || len(pa) != len(pb) {
		return false, err
	}
	used := make([]bool, len(pb))
	for _, p := range pa {
		found := false
		for j, q := range pb {
			if used[j] {
				continue
			}
			ok, err := equal(p[0], q[0], w)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
			if ok, err = equal(p[1], q[1], w); err != nil || !ok {
				return false, err
			}
			used[j], found = true, true
			break
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// deepCopy copies n with its aliases expanded and without anchors, so the copy can stand anywhere.
func deepCopy(n *yaml.Node, w *walker) (*yaml.Node, error) {
	r, err := w.enter(n)
	if err != nil || r == nil {
		return r, err
	}
	defer w.leave(r)
	c := *r
	c.Anchor = ""
	c.Content = nil
	for _, child := range r.Content {
		cc, err := deepCopy(child, w)
		if err != nil {
			return nil, err
		}
		c.Content = append(c.Content, cc)
	}
	return &c, nil
}

// sortedKeys returns m's keys sorted, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
