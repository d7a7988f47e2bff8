package cloudinit

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// addGuestAgent adds qemu-guest-agent to the driver's document: the package, and a runcmd entry enabling and
// starting its service. Each is left out when a user document already has it: the package when `packages` lists
// qemu-guest-agent (as a name or a [name, version] pair), the command when any `runcmd` entry mentions
// qemu-guest-agent (the user manages the service). Rancher's default user data for Harvester has both.
//
// No `package_update: true` is added: cc_package_update_upgrade_install.handle refreshes the package index
// whenever `packages` is non-empty (`if update or len(pkglist) or upgrade: update_package_sources()`), so fresh
// images with empty apt lists still install it. The runcmd script runs in the final stage's scripts-user, after
// package-update-upgrade-install (cloud_final_modules order in /etc/cloud/cloud.cfg), so the unit exists by then.
func addGuestAgent(doc *yaml.Node, docs []*yaml.Node) {
	hasPackage, hasCommand := false, false
	for _, d := range docs {
		hasPackage = hasPackage || listsPackage(yamlnode.Get(d.Content[0], "packages"))
		hasCommand = hasCommand || mentionsAgent(yamlnode.Get(d.Content[0], "runcmd"))
	}
	if !hasPackage {
		yamlnode.Set(doc, "packages", yamlnode.StrSeq(guestAgent))
	}
	if !hasCommand {
		yamlnode.Set(doc, "runcmd", yamlnode.Seq(yamlnode.StrSeq("systemctl", "enable", "--now", guestAgentUnit)))
	}
}

func listsPackage(pkgs *yaml.Node) bool {
	if pkgs == nil || pkgs.Kind != yaml.SequenceNode {
		return false
	}
	for _, p := range pkgs.Content {
		p = yamlnode.Resolve(p)
		if p.Kind == yaml.SequenceNode && len(p.Content) > 0 {
			p = yamlnode.Resolve(p.Content[0])
		}
		if s, ok := yamlnode.ScalarText(p); ok && strings.TrimSpace(s) == guestAgent {
			return true
		}
	}
	return false
}

func mentionsAgent(cmds *yaml.Node) bool {
	if cmds == nil || cmds.Kind != yaml.SequenceNode {
		return false
	}
	for _, c := range cmds.Content {
		c = yamlnode.Resolve(c)
		words := []*yaml.Node{c}
		if c.Kind == yaml.SequenceNode {
			words = c.Content
		}
		for _, w := range words {
			if s, ok := yamlnode.ScalarText(w); ok && strings.Contains(s, guestAgent) {
				return true
			}
		}
	}
	return false
}
