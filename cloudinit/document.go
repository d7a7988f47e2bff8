package cloudinit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// Header lines of the documents this package writes.
const (
	headerCloudConfig = "#cloud-config"
	headerJinja       = "## template: jinja"
)

// parseConfig parses a cloud-config body (its #cloud-config line, if any, already blanked) into a document
// node whose single child is a mapping. An empty document becomes an empty mapping, keeping any comments.
func parseConfig(text []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		// cloud-init reads user data with yaml.safe_load, which refuses a stream of several documents.
		return nil, errors.New("holds more than one YAML document (a line `---` starts another); cloud-init reads one")
	}
	if doc.Kind == 0 || (len(doc.Content) == 1 && yamlnode.IsNull(doc.Content[0])) {
		return &yaml.Node{Kind: yaml.DocumentNode, HeadComment: commentLines(text), Content: []*yaml.Node{yamlnode.Map()}}, nil
	}
	if top := doc.Content[0]; top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("must be a YAML mapping of cloud-config keys, not %s", yamlnode.KindName(top))
	}
	return &doc, nil
}

// checkConfig checks a parsed cloud-config the way cloud-init will load it: its aliases neither cycle nor
// expand past the budget (yamlnode.CheckTree), and every node constructs in cloud-init's YAML loader
// (yamlnode.CheckLoadable: no tag outside the ones it knows, values its tags can read).
func checkConfig(doc *yaml.Node) error {
	if err := yamlnode.CheckTree(doc, yamlnode.NewWalker()); err != nil {
		return err
	}
	return yamlnode.CheckLoadable(doc)
}

// configError files a problem of a cloud-config document under part, at where (a MIME part; "" for the part as
// a whole), and for a node cloud-init could not load, at that node's key path inside the document.
func configError(part Part, where string, err error) error {
	var le *yamlnode.LoadError
	if !errors.As(err, &le) || le.Path == "" {
		if where == "" {
			return inPart(part, err)
		}
		return at(part, where, err)
	}
	if where == "" {
		return at(part, le.Path, err)
	}
	return at(part, where+": "+le.Path, err)
}

// commentLines returns the comment lines of a document that holds nothing else; yaml.v3 drops them.
func commentLines(text []byte) string {
	var out []string
	for _, line := range strings.Split(string(text), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// splitHeader removes the first line of a document that starts (after blank space) with a header such as
// #cloud-config, keeping the line break so YAML errors keep their line numbers. ok is false when text does not
// start with it (case ignored, as cloud-init does).
func splitHeader(text []byte, header string) (rest []byte, ok bool) {
	text = bytes.TrimPrefix(text, []byte("\ufeff"))
	start := len(text) - len(bytes.TrimLeft(text, " \t\r\n\v\f"))
	if !bytes.HasPrefix(bytes.ToLower(text[start:]), []byte(header)) {
		return nil, false
	}
	end := bytes.IndexByte(text[start:], '\n')
	if end < 0 {
		return append([]byte{}, text[:start]...), true
	}
	out := append([]byte{}, text[:start]...)
	return append(out, text[start+end:]...), true
}

// encode writes doc as YAML with two-space indentation, and checks that what it wrote reads back as the same
// data: yaml.v3 can misplace some comments when re-emitting a document, so if the check fails the document is
// written again without comments, and if that fails too the error is returned.
func encode(doc *yaml.Node) ([]byte, error) {
	out, err := yamlnode.Encode(doc)
	if err == nil {
		return out, nil
	}
	w := yamlnode.NewWalker()
	bare, cerr := deepCopyKeepAnchors(doc, w)
	if cerr != nil {
		return nil, cerr
	}
	stripComments(bare)
	if out, err2 := yamlnode.Encode(bare); err2 == nil {
		return out, nil
	}
	return nil, err
}

// deepCopyKeepAnchors copies a tree node for node, keeping anchors and pointing aliases at the copies.
func deepCopyKeepAnchors(n *yaml.Node, w *yamlnode.Walker) (*yaml.Node, error) {
	copies := map[*yaml.Node]*yaml.Node{}
	var cp func(n *yaml.Node, depth int) *yaml.Node
	var err error
	cp = func(n *yaml.Node, depth int) *yaml.Node {
		if n == nil || err != nil {
			return nil
		}
		if w.Left--; w.Left < 0 || depth > 10000 {
			err = yamlnode.ErrTooLarge
			return nil
		}
		c := *n
		copies[n] = &c
		c.Content = nil
		for _, child := range n.Content {
			c.Content = append(c.Content, cp(child, depth+1))
		}
		return &c
	}
	root := cp(n, 0)
	if err != nil {
		return nil, err
	}
	var fix func(n *yaml.Node)
	fix = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			if c, ok := copies[n.Alias]; ok {
				n.Alias = c
			}
		}
		for _, child := range n.Content {
			fix(child)
		}
	}
	fix(root)
	return root, nil
}

func stripComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		stripComments(c)
	}
}
