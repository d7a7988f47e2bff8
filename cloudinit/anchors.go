package cloudinit

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// fixAnchors makes a merged tree safe and tidy to write. Merging builds new nodes for what it combines and reuses the
// inputs' nodes elsewhere, so the tree may hold an alias whose anchor is no longer written (it was on a node a
// merge replaced), the same anchored node twice (a merge key copied it), or two anchors of one name (from two
// MIME parts). PyYAML, which cloud-init reads user data with, refuses duplicate anchors and unknown aliases.
//
// Walking in the order the encoder writes, fixAnchors keeps an alias whose anchor is already written under
// the same name, writes an anchored node seen before as an alias to it, expands any other alias into a copy of
// what it names (so an alias to a node the merge replaced keeps meaning the user's original value), and renames
// an anchor whose name is taken. Input nodes are never changed: a node that needs a change is copied.
func fixAnchors(n *yaml.Node) (*yaml.Node, error) {
	f := &anchorFixer{w: yamlnode.NewWalker(), name: map[*yaml.Node]string{}, bound: map[string]*yaml.Node{}}
	return f.fix(n)
}

type anchorFixer struct {
	w     *yamlnode.Walker
	name  map[*yaml.Node]string // anchored nodes already written, and the name they were written with
	bound map[string]*yaml.Node // anchor names in use, and the node each names now
}

func (f *anchorFixer) fix(n *yaml.Node) (*yaml.Node, error) {
	if f.w.Left--; f.w.Left < 0 {
		return nil, yamlnode.ErrTooLarge
	}
	if n.Kind == yaml.ScalarNode && n.Tag == yamlnode.TagMerge && n.Value == "<<" && n.Style == 0 {
		// yaml.v3 would write a parsed merge key as `!!merge <<`; plain `<<` means the same to every YAML reader.
		c := *n
		c.Tag = ""
		return &c, nil
	}
	if n.Kind == yaml.AliasNode {
		if name, ok := f.name[n.Alias]; ok && f.bound[name] == n.Alias {
			if name == n.Value {
				return n, nil
			}
			c := *n
			c.Value = name
			return &c, nil
		}
		return yamlnode.DeepCopy(n, f.w)
	}
	if n.Anchor != "" {
		if name, ok := f.name[n]; ok {
			if f.bound[name] == n {
				return &yaml.Node{Kind: yaml.AliasNode, Value: name, Alias: n}, nil
			}
			return yamlnode.DeepCopy(n, f.w)
		}
		name := n.Anchor
		for i := 2; f.bound[name] != nil; i++ {
			name = n.Anchor + "_" + strconv.Itoa(i)
		}
		f.name[n], f.bound[name] = name, n
		if name != n.Anchor {
			c := *n
			c.Anchor = name
			return f.children(n, &c)
		}
	}
	return f.children(n, nil)
}

// children fixes n's children; out is n's copy if one was already made. n is copied when a child changes.
func (f *anchorFixer) children(n, out *yaml.Node) (*yaml.Node, error) {
	var content []*yaml.Node // nil until a child changes
	for i, child := range n.Content {
		fixed, err := f.fix(child)
		if err != nil {
			return nil, err
		}
		if fixed != child && content == nil {
			content = append([]*yaml.Node(nil), n.Content...)
		}
		if content != nil {
			content[i] = fixed
		}
	}
	if content == nil && out == nil {
		return n, nil
	}
	if out == nil {
		c := *n
		out = &c
	}
	if content != nil {
		out.Content = content
	}
	return out, nil
}
