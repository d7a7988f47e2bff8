// Package cloudinit renders the user data a Harvester VM boots with; package networkconfig beside it checks
// network data. Both are pure: no clock, randomness, network or files; the same Input always gives the same
// bytes.
//
// # Inputs
//
// UserData combines three documents (see Input): the driver's own cloud-config (hostname, SSH access, guest
// agent, driver files), the user's --harvester-user-data, and Rancher's document behind
// --harvester-cloud-config (rancher-machine's file with `hostname`, the gzip+b64 install.sh in `write_files`,
// and `runcmd: [sh /usr/local/custom_script/install.sh]`; commands/create.go writeCloudConfig).
//
// The user's user data may be anything cloud-init reads: it is classified as cloud-init classifies it
// (gzip is inflated first; a message with "MIME-Version:" in its first 4096 bytes is MIME; otherwise the first
// line decides, case-insensitively: user_data.convert_string, handlers.type_from_starts_with). A YAML mapping
// without the #cloud-config line is taken as cloud-config, as the reference driver did. Anything else is an
// error of PartUser.
//
// Size is bounded in all, not part by part: the user data and everything inflated from it (the whole of it when
// it is gzip, and every gzip part of a MIME message) draw on one userdata.Budget of userdata.MaxSize (1 MiB, the
// most the cloud-init Secret holds), and inflating stops as soon as it is spent, so a small input of many gzip
// parts is refused without being inflated in full. The rendered user data must fit in userdata.MaxSize too.
//
// Every cloud-config document read (the user's, each text/cloud-config MIME part, a jinja template merged like
// one, Rancher's) must be one cloud-init's YAML loader constructs (safeyaml.load: PyYAML's SafeLoader, plus
// !!python/unicode). cloud-init drops a document it cannot load, and merged with the driver's it would take the
// SSH key with it. So no tag outside the standard ones (!!python/object:…, !Ref, !foo are refused), no standard
// tag on the wrong kind of node, no value its tag cannot read (explicit, or PyYAML's YAML 1.1 implicit one: a
// plain 2024-02-30 is a timestamp), no plain = or << outside a key, no list or mapping as a key. The error names
// the part and the node's key path (yamlnode.CheckLoadable has the rules).
//
// # Errors
//
// Every error of UserData, Check and CheckParts is an *Error: the part of the input at fault (Part: the user's
// user data, Rancher's document, the SSH password, the driver's files), where inside it (a key path such as
// runcmd, or a MIME part) and what is wrong. The package names no flag: the caller maps parts to its own inputs.
// Check reports every part's problems at once and returns no output; CheckParts reads only the parts a user
// writes, each on its own, for a caller that has not the driver's parts to merge them with.
//
// # Output
//
// When the user's data is cloud-config (or a MIME message of cloud-config parts only), the output is one
// #cloud-config document. When it holds anything else (a #! script, #include, #cloud-boothook, #part-handler, a
// jinja template that cannot be merged, other MIME parts), the output is a MIME multipart message, the format
// cloud-init's make-mime writes: first a text/cloud-config part with the merged cloud-config, then the user's
// other parts, unchanged and in order (headers sorted by name). The boundary is a hash of the content. ASCII
// parts are sent 7bit; others base64, which Python's email parser decodes safely.
//
// A cloud-config that mentions "mime-version:" in its first 4096 bytes is sent as a one-part MIME message:
// cloud-init would otherwise parse the document itself as MIME (user_data.convert_string).
//
// # Merge
//
// The merge edits yaml.v3 nodes, never maps, so the user's comments, key order, styles and anchors survive.
// The base is the user's cloud-config; several text/cloud-config parts of a MIME message are merged in order,
// by these rules whatever their Merge-Type headers or merge_how keys say. Rancher's document may lack its
// #cloud-config line (as the reference read it) but must be YAML.
//
//   - Keys: the user's in their order, then the driver's new keys, then Rancher's.
//   - Lists, at any depth (packages, runcmd, bootcmd, write_files, ssh_authorized_keys, users, groups, …), are
//     concatenated: driver, user, Rancher. So the guest agent's command runs before the user's runcmd and
//     Rancher's install command runs last. An entry equal to one an earlier document gave (same data, styles
//     and comments aside) is left out; a document's own repeats are kept. `users` and `groups` in their string
//     or mapping forms are read as cloud-init reads them (ug_util) before concatenating, and two `users`
//     entries naming the same user are merged into one. packages, runcmd, bootcmd, write_files and
//     ssh_authorized_keys must be lists: another kind there is an error naming the part and the key.
//   - Mappings (chpasswd, apt, …) merge key by key with these rules.
//   - Scalars: a later user part over an earlier one, the user over Rancher, Rancher over the driver's
//     defaults (disable_root, ssh_pwauth, chpasswd.expire).
//   - Aliases: a merged value is a new node. An alias to a node the merge replaced is expanded into a copy of
//     the user's original, so `bootcmd: *cmds` keeps meaning the user's list; anchors are never duplicated.
//     YAML merge keys (<<) in merged mappings are expanded as PyYAML expands them. Aliases that expand to
//     more than a million nodes, or that contain themselves, are refused.
//
// # Per-node identity
//
// `hostname` is driver-owned: Rancher's document's hostname (rancher-machine's --hostname-override or the
// machine name) if present, else Input.Hostname. User data is shared by every machine of a pool, so its
// `hostname`, `fqdn` and `preserve_hostname` would give all of them one name, and the guest cloud provider and
// CSI driver find a node's VM by node name = VM name. They are dropped (fqdn: util.get_hostname_fqdn takes the
// hostname from it, and RHEL-family distros set the FQDN as the system hostname, distros/rhel.py
// prefer_fqdn = True; preserve_hostname: true keeps the image's own hostname). The machine's hostname takes the
// place of the user's, with a comment saying what was dropped. prefer_fqdn_over_hostname is kept: without
// fqdn, the FQDN comes from the per-VM meta-data.
//
// # Driver parts
//
//   - SSH keys go to top-level ssh_authorized_keys, which reach the image's default user and root
//     (cc_ssh.apply_credentials). For root (the default SSHUser) `disable_root: false` is added, or root's keys
//     would print "Please login as …". Another SSHUser gets a `users` entry with the keys, passwordless sudo
//     and /bin/bash, after `default` (user data's `users` replaces cloud.cfg's `users: [default]`; `default`
//     is left out only when the user's own `users` list leaves it out). If SSHUser is the image's default
//     user, cloud-init merges the entry into it, distro settings first (ug_util._normalize_users).
//   - A password is set with chpasswd.users (type text, expire false; cloud-init 22.3+) and ssh_pwauth: true,
//     double-quoted by yaml.v3 so every character survives. A line break is refused: distros.chpasswd pipes
//     "name:password" lines to chpasswd(8).
//   - qemu-guest-agent: `packages: [qemu-guest-agent]` and runcmd `[systemctl, enable, --now,
//     qemu-guest-agent.service]`, each left out when the user already has it; InstallGuestAgent false leaves
//     both out for air-gapped images (harvester/harvester#3392). See addGuestAgent for why no package_update.
//   - Driver files are written with encoding b64.
//   - Strings the driver writes are quoted unless plainly safe in YAML 1.1, which PyYAML (cloud-init's reader)
//     speaks: `on` or `1:30` written plain would read back as a boolean or an integer.
//
// # Parts the merge cannot see into
//
//   - A `## template: jinja` document whose template renders a cloud-config is merged like one, keeping its
//     first line, when it parses as YAML and all its jinja lies inside scalars or comments (re-writing YAML
//     would otherwise rewrite the template), and nothing the driver or Rancher adds contains a jinja delimiter
//     (it would be rendered too). Otherwise it becomes a text/jinja2 part with a Merge-Type header
//     (mergeHeader) that makes cloud-init append its lists before the driver's and keep the driver's values
//     for keys both set; the driver's cloud-config then also pins fqdn and preserve_hostname, which the
//     template could otherwise set. Without the header, cloud-init's default merger replaces lists across
//     parts (handlers/cloud_config.py DEF_MERGERS dict(replace)), which would drop Rancher's runcmd.
//   - Shell script parts are written by cloud-init to the instance's scripts directory as part-NNN (or their
//     MIME filename), next to the runcmd script, and cc_scripts_user runs them in sorted name order
//     (subp.runparts), so part-NNN runs before runcmd and Rancher's install command stays last. A user's MIME
//     part whose filename sorts after "runcmd" runs after it.
//   - An #include'd cloud-config is fetched by the guest and merged with cloud-init's default rules.
//
// # Network data
//
// Package networkconfig checks version 1 and version 2 network-config the way cloud-init 22.4's
// NetworkStateInterpreter and renderers need it, naming the field at fault; the document itself is used
// unchanged and always travels in the cloud-init Secret.
package cloudinit
