package cloudinit

import (
	"strings"

	"gopkg.in/yaml.v3"
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
		hasPackage = hasPackage || listsPackage(get(d.Content[0], "packages"))
		hasCommand = hasCommand || mentionsAgent(get(d.Content[0], "runcmd"))
	}
	if !hasPackage {
		set(doc, "packages", strSeq(guestAgent))
	}
	if !hasCommand {
		set(doc, "runcmd", seqNode(strSeq("systemctl", "enable", "--now", guestAgentUnit)))
	}
}

func listsPackage(pkgs *yaml.Node) bool {
	if pkgs == nil || pkgs.Kind != yaml.SequenceNode {
		return false
	}
	for _, p := range pkgs.Content {
		p = resolve(p)
		if p.Kind == yaml.SequenceNode && len(p.Content) > 0 {
			p = resolve(p.Content[0])
		}
		if s, ok := scalarText(p); ok && strings.TrimSpace(s) == guestAgent {
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
		c = resolve(c)
		words := []*yaml.Node{c}
		if c.Kind == yaml.SequenceNode {
			words = c.Content
		}
		for _, w := range words {
			if s, ok := scalarText(w); ok && strings.Contains(s, guestAgent) {
				return true
			}
		}
	}
	return false
}
