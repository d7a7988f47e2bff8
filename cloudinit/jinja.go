package cloudinit

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// jinjaDelims open jinja's expressions, statements and comments.
var jinjaDelims = []string{"{{", "{%", "{#"}

// jinjaToken matches one jinja construct on one line.
var jinjaToken = regexp.MustCompile(`\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}`)

// mergeHeader is how a user's jinja template part merges into the driver's cloud-config once cloud-init has
// rendered it. cloud-init merges a part with the mergers named in its Merge-Type header
// (handlers/cloud_config.py _extract_mergers; the jinja handler passes the part's headers on to the cloud-config
// handler), else with dict(replace)+list()+str(), which would replace the driver's runcmd, and so Rancher's
// install command, with the template's. With this header, lists are concatenated with the template's entries
// first (mergers/m_list.py "prepend"), so Rancher's install command still runs last; nested mappings merge;
// and a key both set keeps the driver's value (mergers/m_dict.py "no_replace"), so the hostname stays the
// machine's.
const mergeHeader = "dict(no_replace,recurse_list)+list(prepend)+str()"

func hasJinja(s string) bool {
	for _, d := range jinjaDelims {
		if strings.Contains(s, d) {
			return true
		}
	}
	return false
}

// jinjaInScalars reports whether every jinja construct of text lies within one YAML scalar or comment of doc,
// the parse of text. Only then does writing doc again keep the template: a construct YAML read as structure
// (`hostname: {{ v1.local_hostname }}` is a flow mapping to yaml.v3) would be rewritten into something else.
func jinjaInScalars(text []byte, doc *yaml.Node) bool {
	s := string(text)
	opened := 0
	for _, d := range jinjaDelims {
		opened += strings.Count(s, d)
	}
	tokens := jinjaToken.FindAllString(s, -1)
	if len(tokens) != opened {
		return false // a construct spans lines or is not closed
	}
	var texts []string
	collectTexts(doc, &texts)
	want := map[string]int{}
	for _, t := range tokens {
		want[t]++
	}
	for t, n := range want {
		have := 0
		for _, x := range texts {
			have += strings.Count(x, t)
		}
		if have < n {
			return false
		}
	}
	return true
}

// collectTexts gathers the values of scalars and the comments of a tree (aliases are not followed: what they
// name is collected where it is defined).
func collectTexts(n *yaml.Node, out *[]string) {
	if n == nil {
		return
	}
	*out = append(*out, n.HeadComment, n.LineComment, n.FootComment)
	if n.Kind == yaml.ScalarNode {
		*out = append(*out, n.Value)
	}
	for _, c := range n.Content {
		collectTexts(c, out)
	}
}

// inputHasJinja reports whether anything the driver or Rancher adds contains a jinja delimiter. Merged into a
// jinja template it would be rendered too, so then the user's template is sent as a part of its own.
func inputHasJinja(in Input) bool {
	if hasJinja(in.Hostname) || hasJinja(in.SSHUser) || hasJinja(in.SSHPassword) || hasJinja(string(in.Rancher)) {
		return true
	}
	for _, k := range in.SSHAuthorizedKeys {
		if hasJinja(k) {
			return true
		}
	}
	for _, f := range in.WriteFiles { // contents are base64, which has no braces
		if hasJinja(f.Path) || hasJinja(f.Owner) || hasJinja(f.Permissions) {
			return true
		}
	}
	return false
}
