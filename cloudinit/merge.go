package cloudinit

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// listSections are the top-level keys whose values cloud-init's schema requires to be lists, and which the
// driver, the user and Rancher all add to: a value of another kind there is an error, not a silent override.
var listSections = map[string]bool{
	"packages": true, "runcmd": true, "bootcmd": true, "write_files": true, "ssh_authorized_keys": true,
}

// source is one cloud-config document taking part in a merge. Sources are passed in the order their list
// entries are concatenated; order sets the key order of the result and rank which scalar wins (lower first).
type source struct {
	part  Part // the input the document came from, named in errors
	order int
	rank  int
}

// value is one source's node at some path of the merge.
type value struct {
	node *yaml.Node
	src  *source
	pos  int // the source's place in concatenation order
}

// merger merges cloud-config documents node by node (see the package documentation for the rules).
type merger struct{ w *yamlnode.Walker }

// mergeDocs merges the top-level mappings of docs (document nodes, in concatenation order) into a new document
// that carries the comments of the document with the lowest order.
func mergeDocs(docs []*yaml.Node, srcs []*source) (*yaml.Node, error) {
	m := &merger{w: yamlnode.NewWalker()}
	vals := make([]value, 0, len(docs))
	primary := 0
	for i, d := range docs {
		vals = append(vals, value{node: d.Content[0], src: srcs[i], pos: i})
		if srcs[i].order < srcs[primary].order {
			primary = i
		}
	}
	top, err := m.mappings(vals, "")
	if err != nil {
		return nil, err
	}
	out := *docs[primary]
	out.Content = []*yaml.Node{top}
	return &out, nil
}

// merge merges the values one path holds in several sources.
func (m *merger) merge(vals []value, path string) (*yaml.Node, error) {
	present := vals[:0:0]
	for _, v := range vals {
		if !yamlnode.IsNull(v.node) {
			present = append(present, v)
		}
	}
	switch len(present) {
	case 0:
		return byRank(vals).node, nil
	case 1:
		return present[0].node, nil
	}
	if path == "users" || path == "groups" {
		var err error
		if present, err = normalizeUsersGroups(present, path); err != nil {
			return nil, err
		}
	}
	kinds := map[yaml.Kind]bool{}
	for _, v := range present {
		kinds[yamlnode.Resolve(v.node).Kind] = true
	}
	switch {
	case len(kinds) == 1 && kinds[yaml.MappingNode]:
		return m.mappings(present, path)
	case len(kinds) == 1 && kinds[yaml.SequenceNode]:
		return m.sequences(present, path)
	case kinds[yaml.SequenceNode] && listSections[path]:
		for _, v := range present {
			if k := yamlnode.Resolve(v.node).Kind; k != yaml.SequenceNode {
				return nil, at(v.src.part, path, fmt.Errorf("must be a list, not %s", yamlnode.KindName(v.node)))
			}
		}
	}
	return byRank(present).node, nil
}

// byRank returns the value whose source wins scalars.
func byRank(vals []value) value {
	best := vals[0]
	for _, v := range vals[1:] {
		if v.src.rank < best.src.rank {
			best = v
		}
	}
	return best
}

// mappings merges mappings key by key. The result is a new node (never one of the inputs, which may be
// anchored and aliased elsewhere) with the style and comments of the lowest-order mapping.
func (m *merger) mappings(vals []value, path string) (*yaml.Node, error) {
	byOrder := append([]value(nil), vals...)
	sort.SliceStable(byOrder, func(i, j int) bool { return byOrder[i].src.order < byOrder[j].src.order })
	type entry struct {
		key  *yaml.Node
		vals []value
	}
	var entries []*entry
	index := map[string]*entry{}
	for _, v := range byOrder {
		ps, err := yamlnode.Pairs(yamlnode.Resolve(v.node), m.w)
		if err != nil {
			return nil, inPart(v.src.part, err)
		}
		for _, p := range ps {
			name, ok := yamlnode.ScalarText(p[0])
			if !ok { // a complex key never matches another
				entries = append(entries, &entry{key: p[0], vals: []value{{node: p[1], src: v.src, pos: v.pos}}})
				continue
			}
			e := index[name]
			if e == nil {
				e = &entry{key: p[0]}
				index[name] = e
				entries = append(entries, e)
			}
			e.vals = append(e.vals, value{node: p[1], src: v.src, pos: v.pos})
		}
	}
	primary := yamlnode.Resolve(byOrder[0].node)
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: primary.Tag, Style: primary.Style,
		HeadComment: primary.HeadComment, LineComment: primary.LineComment, FootComment: primary.FootComment}
	for _, e := range entries {
		sort.SliceStable(e.vals, func(i, j int) bool { return e.vals[i].pos < e.vals[j].pos })
		name, _ := yamlnode.ScalarText(e.key)
		merged, err := m.merge(e.vals, yamlnode.JoinPath(path, name))
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, e.key, merged)
	}
	return out, nil
}

// sequences concatenates lists in source order, leaving out an entry equal to one an earlier source already
// gave (a source's own repeats are kept: a command may be meant to run twice). Under `users`, two entries
// naming the same user are merged into the first one's place, as cloud-init would (ug_util._normalize_users).
func (m *merger) sequences(vals []value, path string) (*yaml.Node, error) {
	type item struct {
		node *yaml.Node
		v    value
	}
	var items []item
	for _, v := range vals {
		seq := yamlnode.Resolve(v.node)
	next:
		for _, n := range seq.Content {
			for i, prev := range items {
				if prev.v.pos == v.pos {
					continue
				}
				same, err := yamlnode.Equal(prev.node, n, m.w)
				if err != nil {
					return nil, at(v.src.part, path, err)
				}
				if same {
					continue next
				}
				if path == "users" && sameUser(prev.node, n) {
					merged, err := m.mappings([]value{prev.v.with(prev.node), v.with(n)}, path)
					if err != nil {
						return nil, err
					}
					items[i].node = merged
					continue next
				}
			}
			items = append(items, item{node: n, v: v})
		}
	}
	primary := vals[0]
	for _, v := range vals[1:] {
		if v.src.order < primary.src.order {
			primary = v
		}
	}
	p := yamlnode.Resolve(primary.node)
	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: p.Tag, Style: p.Style,
		HeadComment: p.HeadComment, LineComment: p.LineComment, FootComment: p.FootComment}
	for _, it := range items {
		out.Content = append(out.Content, it.node)
	}
	return out, nil
}

func (v value) with(n *yaml.Node) value { return value{node: n, src: v.src, pos: v.pos} }

// sameUser reports whether two `users` entries are mappings naming the same user.
func sameUser(a, b *yaml.Node) bool {
	na, okA := yamlnode.ScalarText(yamlnode.Get(a, "name"))
	nb, okB := yamlnode.ScalarText(yamlnode.Get(b, "name"))
	return okA && okB && na == nb
}

// normalizeUsersGroups turns the older forms of `users` and `groups` into lists so they can be concatenated,
// as cloud-init's ug_util._normalize_users and _normalize_groups read them: a comma-separated string is a list
// of names; a `users` mapping is a list of entries (name: true adds the user, name: {…} configures it); a
// `groups` mapping is a list of one-group mappings.
func normalizeUsersGroups(vals []value, path string) ([]value, error) {
	out := make([]value, len(vals))
	for i, v := range vals {
		n := yamlnode.Resolve(v.node)
		out[i] = v
		switch n.Kind {
		case yaml.ScalarNode:
			seq := yamlnode.Seq()
			for _, name := range strings.Split(n.Value, ",") {
				if name = strings.TrimSpace(name); name != "" {
					seq.Content = append(seq.Content, yamlnode.Str(name))
				}
			}
			out[i].node = seq
		case yaml.MappingNode:
			seq := yamlnode.Seq()
			ps, err := yamlnode.Pairs(n, yamlnode.NewWalker())
			if err != nil {
				return nil, at(v.src.part, path, err)
			}
			for _, p := range ps {
				entry, err := normalizedEntry(p, path)
				if err != nil {
					return nil, at(v.src.part, path, err)
				}
				if entry != nil {
					seq.Content = append(seq.Content, entry)
				}
			}
			out[i].node = seq
		}
	}
	return out, nil
}

// normalizedEntry is one pair of a `users` or `groups` mapping as a list entry (nil: a user set to false).
func normalizedEntry(p [2]*yaml.Node, path string) (*yaml.Node, error) {
	name, ok := yamlnode.ScalarText(p[0])
	if !ok {
		return nil, fmt.Errorf("a key is not a name")
	}
	if path == "groups" {
		g := yamlnode.Map()
		g.Content = append(g.Content, p[0], p[1])
		return g, nil
	}
	v := yamlnode.Resolve(p[1])
	switch {
	case v != nil && v.Kind == yaml.MappingNode:
		u := yamlnode.Map()
		yamlnode.Set(u, "name", yamlnode.Str(name))
		for i := 0; i+1 < len(v.Content); i += 2 {
			if k, _ := yamlnode.ScalarText(v.Content[i]); k != "name" {
				u.Content = append(u.Content, v.Content[i], v.Content[i+1])
			}
		}
		return u, nil
	case v != nil && v.Kind == yaml.ScalarNode:
		if isTrue(v.Value) {
			return yamlnode.Str(name), nil
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%s: must be true, false or a mapping", name)
}

// isTrue is cloud-init's util.is_true for the strings YAML hands it.
func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		return true
	}
	return false
}
