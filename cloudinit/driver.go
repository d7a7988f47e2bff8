package cloudinit

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

const (
	rootUser       = "root"
	guestAgent     = "qemu-guest-agent"
	guestAgentUnit = "qemu-guest-agent.service"
	// sudoNoPassword is what cloud-init's own default users get (the `default_user` of Debian's and Ubuntu's
	// /etc/cloud/cloud.cfg).
	sudoNoPassword = "ALL=(ALL) NOPASSWD:ALL"
	loginShell     = "/bin/bash"
)

// identity is what the driver's document says about the machine's name.
type identity struct {
	hostname string // the machine's hostname
	inDriver bool   // the driver's document carries it (else a user document does, in place of the user's)
	note     string // comment for the driver's hostname key
	pin      bool   // also pin fqdn and preserve_hostname: a user part the driver cannot read may set them
}

// driverDoc is the driver's own cloud-config: the per-node hostname, SSH access, the guest agent and the
// driver's files. The user's documents and Rancher's (others) are passed in to see what they already provide.
func driverDoc(in Input, id identity, user []*yaml.Node, others []*yaml.Node) (*yaml.Node, error) {
	doc := yamlnode.Map()
	if id.inDriver {
		yamlnode.Set(doc, "hostname", yamlnode.Str(id.hostname))
		doc.Content[0].HeadComment = id.note
	}
	if id.pin && id.hostname != "" {
		// A jinja template sent as its own part merges with no_replace (mergeHeader): values set here win over
		// its fqdn and preserve_hostname (see poolWideIdentity). An fqdn equal to the hostname names the
		// machine the same whether or not the distro prefers the FQDN.
		yamlnode.Set(doc, "fqdn", yamlnode.Str(id.hostname))
		yamlnode.Set(doc, "preserve_hostname", yamlnode.Bool(false))
	}
	sshUser := in.SSHUser
	if sshUser == "" {
		sshUser = rootUser
	}
	pubKeys := trimmed(in.SSHAuthorizedKeys)
	keys := yamlnode.StrSeq(pubKeys...)
	if len(keys.Content) > 0 {
		// Top-level keys reach the image's default user and root (cc_ssh.apply_credentials).
		yamlnode.Set(doc, "ssh_authorized_keys", keys)
	}
	if sshUser == rootUser {
		// cc_ssh defaults disable_root to true, which prefixes root's keys with a command that prints
		// "Please login as the user …" and exits.
		yamlnode.Set(doc, "disable_root", yamlnode.Bool(false))
	} else {
		yamlnode.Set(doc, "users", usersFor(sshUser, pubKeys, user))
	}
	if in.SSHPassword != "" {
		if err := checkPassword(in.SSHPassword); err != nil {
			return nil, err
		}
		yamlnode.Set(doc, "chpasswd", passwordFor(sshUser, in.SSHPassword))
		yamlnode.Set(doc, "ssh_pwauth", yamlnode.Bool(true))
	}
	if in.InstallGuestAgent {
		addGuestAgent(doc, append(append([]*yaml.Node(nil), user...), others...))
	}
	if files, err := writeFiles(in.WriteFiles); err != nil {
		return nil, err
	} else if files != nil {
		yamlnode.Set(doc, "write_files", files)
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}, nil
}

func trimmed(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// usersFor is the `users` list for a non-root SSH user: the user with the keys, passwordless sudo and a shell.
// `default` comes first unless the user's own `users` list leaves the image's default user out on purpose:
// `users` in user data replaces cloud.cfg's `users: [default]`, so without `default` the image's default user
// would silently not be created. When the SSH user is the image's default user (e.g. ubuntu), cloud-init merges
// this entry into it, the distro's settings first (ug_util._normalize_users), so the keys are added and nothing
// else changes.
func usersFor(name string, keys []string, user []*yaml.Node) *yaml.Node {
	entry := yamlnode.Map()
	yamlnode.Set(entry, "name", yamlnode.Str(name))
	yamlnode.Set(entry, "sudo", yamlnode.Str(sudoNoPassword))
	yamlnode.Set(entry, "shell", yamlnode.Str(loginShell))
	if len(keys) > 0 {
		yamlnode.Set(entry, "ssh_authorized_keys", yamlnode.StrSeq(keys...))
	}
	if usersWithoutDefault(user) {
		return yamlnode.Seq(entry)
	}
	return yamlnode.Seq(yamlnode.Str("default"), entry)
}

// usersWithoutDefault reports whether some user document lists users and none of those lists has `default`.
func usersWithoutDefault(docs []*yaml.Node) bool {
	listed := false
	for _, d := range docs {
		u := yamlnode.Get(d.Content[0], "users")
		if u == nil {
			continue
		}
		listed = true
		if u.Kind == yaml.ScalarNode && strings.Contains(","+strings.ReplaceAll(u.Value, " ", "")+",", ",default,") {
			return false
		}
		for _, e := range u.Content {
			if s, ok := yamlnode.ScalarText(e); ok && s == "default" {
				return false
			}
		}
		if u.Kind == yaml.MappingNode && yamlnode.Lookup(u, "default") >= 0 {
			return false
		}
	}
	return listed
}

// passwordFor is the chpasswd section setting one plain-text password (chpasswd.users, cloud-init 22.3+; the
// 22.4 schema accepts it). expire: false, or the first login would demand a new password.
func passwordFor(name, password string) *yaml.Node {
	entry := yamlnode.Map()
	yamlnode.Set(entry, "name", yamlnode.Str(name))
	pw := yamlnode.Str(password)
	pw.Style = yaml.DoubleQuotedStyle // every character survives, whatever YAML 1.1 would make of it plain
	yamlnode.Set(entry, "password", pw)
	yamlnode.Set(entry, "type", yamlnode.Str("text"))
	ch := yamlnode.Map()
	yamlnode.Set(ch, "expire", yamlnode.Bool(false))
	yamlnode.Set(ch, "users", yamlnode.Seq(entry))
	return ch
}

// checkPassword refuses a password chpasswd cannot set: distros.Distro.chpasswd pipes "name:password" lines to
// chpasswd(8), so a line break would end the password there and make the rest a malformed line.
func checkPassword(password string) error {
	if strings.ContainsAny(password, "\r\n\x00") {
		return inPart(PartSSHPassword, errors.New("contains a line break or NUL, which chpasswd cannot set"))
	}
	return nil
}

// writeFiles renders the driver's files, base64-encoded so any bytes survive YAML.
func writeFiles(files []File) (*yaml.Node, error) {
	if len(files) == 0 {
		return nil, nil
	}
	out := yamlnode.Seq()
	for i, f := range files {
		if !strings.HasPrefix(f.Path, "/") {
			return nil, at(PartWriteFiles, fmt.Sprintf("write_files[%d]", i), fmt.Errorf("path %q is not absolute", f.Path))
		}
		e := yamlnode.Map()
		yamlnode.Set(e, "path", yamlnode.Str(f.Path))
		yamlnode.Set(e, "encoding", yamlnode.Str("b64"))
		yamlnode.Set(e, "content", yamlnode.Str(base64.StdEncoding.EncodeToString([]byte(f.Content))))
		if f.Owner != "" {
			yamlnode.Set(e, "owner", yamlnode.Str(f.Owner))
		}
		if f.Permissions != "" {
			yamlnode.Set(e, "permissions", yamlnode.Str(f.Permissions))
		}
		out.Content = append(out.Content, e)
	}
	return out, nil
}
