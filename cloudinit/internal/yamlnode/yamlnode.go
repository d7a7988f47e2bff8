// Package yamlnode is cloudinit's toolkit for yaml.v3 node trees: reading mappings through aliases and merge
// keys with a step budget (billion laughs) and cycle checks, comparing and copying trees, checking that
// cloud-init's YAML loader constructs every node of a document (CheckLoadable: tags, values, keys), and building
// the nodes the driver writes, quoted so PyYAML (YAML 1.1, cloud-init's reader) reads every string back as itself.
package yamlnode

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"

	"go.yaml.in/yaml/v3"
)

// YAML tags as yaml.v3 reports them (Node.ShortTag).
const (
	TagStr   = "!!str"
	TagBool  = "!!bool"
	TagInt   = "!!int"
	TagNull  = "!!null"
	TagMerge = "!!merge"
)

// MaxVisits bounds the work spent following aliases: YAML aliases can make a small document stand for an
// exponentially large tree ("billion laughs"), and every walk here counts its steps against this budget.
const MaxVisits = 1 << 20

var (
	ErrAliasCycle = errors.New("an alias refers to a node that contains it")
	ErrTooLarge   = errors.New("the document's aliases expand to more than a million nodes")
)

// Walker follows aliases with a step budget and refuses cycles (yaml.v3 lets `a: &x [*x]` parse).
type Walker struct {
	Left   int // steps still to spend; a walk that reaches 0 fails with ErrTooLarge
	onPath map[*yaml.Node]bool
}

func NewWalker() *Walker { return &Walker{Left: MaxVisits, onPath: map[*yaml.Node]bool{}} }

// Enter resolves n, spends one step and marks the resolved node as being visited; Leave unmarks it.
func (w *Walker) Enter(n *yaml.Node) (*yaml.Node, error) {
	n = Resolve(n)
	if w.Left--; w.Left < 0 {
		return nil, ErrTooLarge
	}
	if n != nil && len(n.Content) > 0 {
		if w.onPath[n] {
			return nil, ErrAliasCycle
		}
		w.onPath[n] = true
	}
	return n, nil
}

func (w *Walker) Leave(n *yaml.Node) {
	if n != nil {
		delete(w.onPath, n)
	}
}

// CheckTree walks all of n through its aliases, failing on an alias cycle or an expansion over the budget.
func CheckTree(n *yaml.Node, w *Walker) error {
	r, err := w.Enter(n)
	if err != nil || r == nil {
		return err
	}
	defer w.Leave(r)
	for _, c := range r.Content {
		if err := CheckTree(c, w); err != nil {
			return err
		}
	}
	return nil
}

// Resolve follows an alias to the node it names.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or a YAML null.
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == TagNull)
}

// ScalarText returns the value of a scalar (through aliases).
func ScalarText(n *yaml.Node) (string, bool) {
	n = Resolve(n)
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

// Str is a string the driver writes.
func Str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: TagStr, Value: s}
	if !plainSafe.MatchString(s) || yaml11Words.MatchString(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func Bool(v bool) *yaml.Node {
	s := "false"
	if v {
		s = "true"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagBool, Value: s}
}

func Seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func StrSeq(items ...string) *yaml.Node {
	n := Seq()
	for _, s := range items {
		n.Content = append(n.Content, Str(s))
	}
	return n
}

func Map() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// Set appends key: value to mapping m.
func Set(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, Str(key), value)
}

// Lookup returns the index in m.Content of key's key node, or -1. Merge keys (<<) are not followed.
func Lookup(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, ok := ScalarText(m.Content[i]); ok && k == key && !IsMergeKey(m.Content[i]) {
			return i
		}
	}
	return -1
}

// Get returns key's value in mapping m (through an alias), or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
	if m = Resolve(m); m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	if i := Lookup(m, key); i >= 0 {
		return Resolve(m.Content[i+1])
	}
	return nil
}

// Remove deletes key from mapping m and returns its value node, or nil.
func Remove(m *yaml.Node, key string) *yaml.Node {
	i := Lookup(m, key)
	if i < 0 {
		return nil
	}
	v := m.Content[i+1]
	m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
	return v
}

func IsMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == TagMerge || (k.Style == 0 && k.Tag == ""))
}

// Pairs returns mapping m's key/value pairs with YAML merge keys (`<<: *base`) expanded, as PyYAML's loader
// expands them: keys written in m win over merged ones, and an earlier mapping in a `<<` list wins over a
// later one. Merged pairs take the place of the `<<` key.
func Pairs(m *yaml.Node, w *Walker) ([][2]*yaml.Node, error) {
	explicit := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, ok := ScalarText(m.Content[i]); ok && !IsMergeKey(m.Content[i]) {
			explicit[k] = true
		}
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !IsMergeKey(k) {
			out = append(out, [2]*yaml.Node{k, v})
			continue
		}
		sources := []*yaml.Node{v}
		if rv := Resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
			sources = rv.Content
		}
		for _, s := range sources {
			rs, err := w.Enter(s)
			if err != nil {
				return nil, err
			}
			if rs == nil || rs.Kind != yaml.MappingNode {
				w.Leave(rs)
				return nil, errors.New("a merge key (<<) must name a mapping")
			}
			sub, err := Pairs(rs, w)
			w.Leave(rs)
			if err != nil {
				return nil, err
			}
			for _, p := range sub {
				name, ok := ScalarText(p[0])
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

// Equal reports whether a and b are the same YAML data: aliases resolved, styles and comments ignored, mapping
// order ignored.
func Equal(a, b *yaml.Node, w *Walker) (bool, error) {
	ra, err := w.Enter(a)
	if err != nil {
		return false, err
	}
	defer w.Leave(ra)
	rb := Resolve(b)
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
			if ok, err := Equal(ra.Content[i], rb.Content[i], w); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	case yaml.MappingNode:
		return equalMappings(ra, rb, w)
	}
	return false, nil
}

func equalMappings(a, b *yaml.Node, w *Walker) (bool, error) {
	pa, err := Pairs(a, w)
	if err != nil {
		return false, err
	}
	pb, err := Pairs(b, w)
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
			ok, err := Equal(p[0], q[0], w)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
			if ok, err = Equal(p[1], q[1], w); err != nil || !ok {
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

// DeepCopy copies n with its aliases expanded and without anchors, so the copy can stand anywhere.
func DeepCopy(n *yaml.Node, w *Walker) (*yaml.Node, error) {
	r, err := w.Enter(n)
	if err != nil || r == nil {
		return r, err
	}
	defer w.Leave(r)
	c := *r
	c.Anchor = ""
	c.Content = nil
	for _, child := range r.Content {
		cc, err := DeepCopy(child, w)
		if err != nil {
			return nil, err
		}
		c.Content = append(c.Content, cc)
	}
	return &c, nil
}

// SortedKeys returns m's keys sorted, for deterministic iteration.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// KindName names what a node is, for messages: "a list", "a mapping", "a string", "a scalar" or "empty".
func KindName(n *yaml.Node) string {
	if IsNull(n) {
		return "empty"
	}
	switch Resolve(n).Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		if Resolve(n).ShortTag() == TagStr {
			return "a string"
		}
		return "a scalar"
	}
	return "empty"
}

// JoinPath appends key to a dotted path ("" is the top).
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// IsMapping reports whether b is one YAML document whose top level is a non-empty mapping.
func IsMapping(b []byte) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return false
	}
	return doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode &&
		len(doc.Content[0].Content) > 0
}

// Encode writes doc as YAML indented by two spaces, and checks that it reads back as the same tree.
func Encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("cannot write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("cannot write YAML: %w", err)
	}
	var back yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
		return nil, fmt.Errorf("wrote YAML that does not read back: %w", err)
	}
	if ok, err := Equal(doc, &back, NewWalker()); err != nil {
		return nil, err
	} else if !ok {
		return nil, errors.New("wrote YAML that reads back differently")
	}
	return buf.Bytes(), nil
}
