package cloudinit

import (
	"errors"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// poolWideIdentity are the keys of user data that would name every machine of a pool alike, and are dropped:
//
//   - hostname: the node name. The guest cloud provider and CSI driver find a node's VM by node name = VM name.
//   - fqdn: util.get_hostname_fqdn takes the hostname from it when set, and distros that prefer the FQDN
//     (prefer_fqdn_over_hostname) set it as the system hostname.
//   - preserve_hostname: true makes cc_set_hostname and cc_update_hostname keep the image's own hostname,
//     the same on every machine made from the image.
//
// prefer_fqdn_over_hostname is kept: without an fqdn key the FQDN comes from the per-VM meta-data.
var poolWideIdentity = []string{"hostname", "fqdn", "preserve_hostname"}

// placeHostname applies the hostname rule to the user's documents (top-level merge keys already expanded).
// The hostname is Rancher's (its document's `hostname`, which is --hostname-override or the machine name) when
// present, else in.Hostname. The user's identity keys are dropped; when the user wrote `hostname`, the
// machine's hostname takes its place (so the key keeps its position), with a comment saying what was dropped.
// It returns the hostname, whether the driver's own document must carry it (false when it went into a user
// document) and the comment to put on it there. The user documents' top-level mappings are changed in place:
// they must be the caller's own copies.
func placeHostname(hostname string, rancher *yaml.Node, user []*yaml.Node) (name string, inDriver bool, note string, err error) {
	if rancher != nil {
		top := rancher.Content[0]
		if v := yamlnode.Remove(top, "hostname"); v != nil && !yamlnode.IsNull(v) {
			s, ok := yamlnode.ScalarText(v)
			if !ok || strings.TrimSpace(s) == "" {
				return "", false, "", at(PartRancher, "hostname", errors.New("must be a non-empty string"))
			}
			hostname = s
		}
	}
	var dropped []string
	placed := false
	for _, d := range user {
		top := d.Content[0]
		for _, key := range poolWideIdentity {
			i := yamlnode.Lookup(top, key)
			if i < 0 {
				continue
			}
			dropped = append(dropped, key+": "+describe(top.Content[i+1]))
			if key == "hostname" && !placed && hostname != "" {
				k := *top.Content[i]
				top.Content = append([]*yaml.Node(nil), top.Content...)
				top.Content[i], top.Content[i+1] = &k, yamlnode.Str(hostname)
				placed = true
				continue
			}
			yamlnode.Remove(top, key)
		}
	}
	if len(dropped) == 0 {
		return hostname, hostname != "", "", nil
	}
	note = "# hostname is each machine's own name. Dropped from --harvester-user-data, which all machines\n" +
		"# of a pool share: " + strings.Join(dropped, ", ")
	if placed {
		for _, d := range user {
			if i := yamlnode.Lookup(d.Content[0], "hostname"); i >= 0 {
				k := d.Content[0].Content[i]
				k.HeadComment = strings.TrimSpace(k.HeadComment + "\n" + note)
				break
			}
		}
		return hostname, false, "", nil
	}
	return hostname, hostname != "", note, nil
}

// describe quotes a dropped value for the comment, shortened and on one line.
func describe(n *yaml.Node) string {
	s, ok := yamlnode.ScalarText(n)
	switch {
	case !ok:
		return yamlnode.KindName(n)
	case hasJinja(s):
		return "a jinja expression" // not copied: the comment may itself be rendered as a template
	}
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "..."
	}
	if yamlnode.Resolve(n).ShortTag() != yamlnode.TagStr {
		return s
	}
	return strconv.Quote(s)
}
