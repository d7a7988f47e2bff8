package upstream

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var (
	// docSeparator splits a YAML stream into documents.
	docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
	// actionLine is a line holding nothing but Helm template actions ({{ include ... | indent 4 }}, {{- if }}).
	actionLine = regexp.MustCompile(`^\s*(\{\{.*?\}\}\s*)+$`)
)

// clusterRoles returns, as a YAML stream, the ClusterRole documents of a Helm template whose metadata.name is
// one of names. Lines that hold only template actions are dropped: in Harvester's chart these add labels
// (`{{ include "harvester.labels" . | indent 4 }}`), which the test bed does not need. A wanted document with
// any other template syntax left (outside comments), or a name not found, is an error: such a document cannot be
// used unrendered.
func clusterRoles(tmpl []byte, names ...string) ([]byte, error) {
	var out bytes.Buffer
	var found []string
	for i, doc := range docSeparator.Split(string(tmpl), -1) {
		var kept []string
		for line := range strings.Lines(doc) {
			if !actionLine.MatchString(line) {
				kept = append(kept, line)
			}
		}
		text := strings.Join(kept, "")
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(text), &head); err != nil {
			continue // another document with template syntax yaml cannot read; it is not one of ours
		}
		if head.Kind != "ClusterRole" || !slices.Contains(names, head.Metadata.Name) {
			continue
		}
		if hasAction(kept) {
			return nil, fmt.Errorf("ClusterRole %s (document %d) has template syntax within a line; it needs Helm to render", head.Metadata.Name, i+1)
		}
		found = append(found, head.Metadata.Name)
		fmt.Fprintf(&out, "---\n%s", text)
	}
	for _, n := range names {
		if !slices.Contains(found, n) {
			return nil, fmt.Errorf("no ClusterRole %s in it (found %v)", n, found)
		}
	}
	return out.Bytes(), nil
}

// hasAction reports whether a line outside YAML comments holds template syntax.
func hasAction(lines []string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") && strings.Contains(l, "{{") {
			return true
		}
	}
	return false
}

// crdsNamed keeps, of objs, the CustomResourceDefinitions named names, in the file's order; a name not found is an
// error.
func crdsNamed(objs []*unstructured.Unstructured, names ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	var found []string
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && slices.Contains(names, o.GetName()) {
			out = append(out, o)
			found = append(found, o.GetName())
		}
	}
	for _, n := range names {
		if !slices.Contains(found, n) {
			return nil, fmt.Errorf("no CustomResourceDefinition %s in it (%d objects)", n, len(objs))
		}
	}
	return out, nil
}
