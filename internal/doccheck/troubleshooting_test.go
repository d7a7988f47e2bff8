package doccheck

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harvester/docker-machine-driver-harvester/internal/readmetest"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated list of docs/flag-problems.md from the flag parsers' messages")

const (
	troubleshooting = "docs/troubleshooting.md"
	flagProblems    = "docs/flag-problems.md"
)

// runtimePackages print what a user reads as it is: a create's pre-flight and its wait, rm, the power commands, the
// verbs (check, render, cloud-provider-config, flags), the plugin's lines in Rancher's provisioning log. Each of
// their messages needs an entry in docs/troubleshooting.md.
var runtimePackages = []string{
	"cmd/docker-machine-driver-harvester",
	"harvester",
	"harvester/autoscale", // the comments of check's and render's autoscaling annotations
	"harvester/connection",
	"harvester/guestaccount",
	"harvester/identity",
	"harvester/internal/kube",
	"harvester/internal/quantity", // its refusals, in harvester/internal/kube's messages
	"harvester/iplease",
	"harvester/ippool",
	"harvester/preflight",
	"internal/rancher",
}

// flagGroups are the packages and files whose messages are problems of a flag's value, printed as --flag: message
// under "invalid machine configuration" before anything is made (config.Problems). docs/flag-problems.md lists
// them, generated, under the heading of their file's group, with the group's cause and fix.
var flagGroups = []struct {
	title      string
	files      []string // a package's folder (all its files) or one file, below the module's root
	cause, fix string
}{
	{"The Harvester credential: `--harvester-kubeconfig-content` (and the kubeconfig given to guests, `--harvester-cloud-provider-config`)",
		[]string{"harvester/config/kubeconfig_content.go", "harvester/config/inline_credential.go", "harvester/config/parse_kubeconfig.go"},
		"the kubeconfig is not one client-go would use as it is written: not YAML, JSON or base64 of either, longer than a kubeconfig needs, a name or key given twice, no `current-context` or one that names no context, a context without its user or cluster — or it authenticates with what it does not carry: an `exec` or `auth-provider` plugin, a `tokenFile`, certificate files of the driver's host.",
		"give the Harvester kubeconfig whole and inline (Harvester's UI: Support → Download KubeConfig; `kubectl config view --raw --minify --flatten --kubeconfig harvester.yaml` puts files inline), with the token itself where a plugin printed one ([Security](security.md#the-credential-is-data-not-code)). In Rancher, edit the cloud credential."},
	{"Any flag: numbers, booleans, lengths, names", []string{"harvester/config/options.go", "harvester/config/parse.go",
		"harvester/config/refs.go", "harvester/config/parse_timeout.go", "harvester/config/config.go", "harvester/config/flags.go",
		"harvester/config/redact.go", "harvester/config/keys.go", "harvester/config/subnet.go", "harvester/config/doc.go",
		"internal/bounded"}, // a file a flag names, a value's size
		"a value is not of its flag's kind or form: no whole number, neither true nor false, longer than the flag takes, out of its range, a name Kubernetes or Harvester refuses (a namespace, a label value, `namespace/name`), or a machine name that cannot name a VM (Rancher makes it of the cluster's and the pool's names).",
		"the value as the flag's row in [the flag table](options.md#the-flags) gives its form, range and default; for the machine name, a cluster and pool named with lowercase letters, digits and `-`."},
	{"JSON values: `--harvester-disk-info`, `--harvester-network-info`, `--harvester-vgpu-info`, `--harvester-host-device-info`, `--harvester-vm-affinity`, `--harvester-vm-patch`",
		[]string{"harvester/config/jsonflag.go", "harvester/config/yamldoc.go"},
		"the value is not one JSON document of the flag's form: not JSON (the byte offset says where it breaks), not base64 of JSON, a field the form does not have (names are case-sensitive: `diskInfo`'s disks are `disks`), an empty list, or more than one document.",
		"write it as the flag's row in [the flag table](options.md#the-flags) shows; `jq . file.json` finds a broken document, and the worked examples of [Options](options.md) and [VM options](vm-options.md) are valid values."},
	{"Disks: `--harvester-disk-info`, `--harvester-disk-size`, `--harvester-disk-bus`, `--harvester-image-name`",
		[]string{"harvester/config/parse_disks.go", "harvester/objects/volumes.go"},
		"a disk (`disks[N]` of `--harvester-disk-info`, or the one root disk of `--harvester-image-name` and `--harvester-disk-size`) has neither an image nor a storage class, or a size, boot order, bus, type, access mode, volume mode or cache KubeVirt or Harvester would refuse; an image disk names a storage class other than its image's.",
		"as each message says; `--harvester-disk-info`'s row in [the flag table](options.md#the-flags) gives every field, [VM options](vm-options.md#disks-and-firmware) the cache and the disks kept on remove."},
	{"Disk performance: `io` and `dedicatedIOThread` of `--harvester-disk-info`, `--harvester-io-threads-policy`, `--harvester-io-thread-count`",
		[]string{"harvester/config/parse_diskio.go"},
		"a disk's I/O mode is not native or threads, native without cache none, a dedicated I/O thread on another bus than virtio, either on a CD-ROM; an I/O threads policy KubeVirt does not have, a thread count that is no whole number, given without the supplementalPool policy, or that policy without a count.",
		"as each message says ([VM options](vm-options.md#disks-and-firmware)): for native I/O set `\"cache\":\"none\"` on the disk, for a dedicated I/O thread `\"bus\":\"virtio\"`; give `--harvester-io-thread-count` with `--harvester-io-threads-policy supplementalPool` only."},
	{"Networks and vGPUs: `--harvester-network-info`, `--harvester-network-name`, `--harvester-network-model`, `--harvester-vgpu-info`",
		[]string{"harvester/config/parse_nics.go"},
		"a NIC (`interfaces[N]`, `nic-N`) lacks its network, has a MAC address that is no unicast one or is another NIC's, a model or type the driver does not build, or is a second masquerade interface; a vGPU's name or device name is malformed, missing or another's.",
		"as each message says: a network as Harvester lists it under Networks → VM Networks (`namespace/name`), a vGPU's device name as under Advanced → vGPU Devices ([Placement](placement.md#host-devices-pci-and-usb-passthrough))."},
	{"Host devices: `--harvester-host-device-info`", []string{"harvester/config/parse_hostdevices.go"},
		"a host device's name is malformed or another device's (vGPUs included: KubeVirt needs each name once), its `deviceName` is missing or no resource name, its tag is not printable ASCII, or it names a DRA claim.",
		"names as the message says; `deviceName` as Harvester shows the device under Advanced → PCI Devices or USB Devices ([Placement](placement.md#host-devices-pci-and-usb-passthrough))."},
	{"Placement: `--harvester-vm-affinity`, `--harvester-zone`, `--harvester-region`, `--harvester-vm-labels`, the strategies",
		[]string{"harvester/config/parse_affinity.go", "harvester/config/parse_labels.go", "harvester/config/parse_strategies.go"},
		"`--harvester-vm-affinity` is no Kubernetes `Affinity` the API server would take (an operator with the wrong count of values, a missing or malformed key or `topologyKey`, a weight outside 1 to 100, an empty term); a zone or region is no label value; `--harvester-vm-labels` is not `key=value,…`, holds a key or value Kubernetes refuses, a label the driver sets itself, or one twice; a strategy is none of those listed.",
		"as each message says ([Placement](placement.md))."},
	{"Static addresses: `--harvester-ip-pool` and its gateway, DNS servers and search domains",
		[]string{"harvester/config/parse_ippool.go", "harvester/config/validate_ippool.go", "harvester/config/problems.go"},
		"`--harvester-ip-pool` is not `FIRST-LAST/PREFIX` or a subnet, gives more ranges or families than one NIC takes, reaches into addresses no node can have, or holds more than a pool may; a gateway or DNS server is of another family or outside the subnet; search domains are no DNS names, too many or too long, or come without DNS servers; the network data or the first NIC disagrees with the pool.",
		"as each message says ([Static addresses](static-addresses.md))."},
	{"Addresses Harvester manages: `--harvester-ip-pool-name`",
		[]string{"harvester/config/parse_leasepool.go", "harvester/config/validate_leasepool.go"},
		"`--harvester-ip-pool-name` is not `namespace/name` or a name, comes with `--harvester-ip-pool`, or the first NIC cannot take a lease (a masquerade interface, a `macAddress` every machine would share); the network data could configure the first NIC too, or is kept in a Secret.",
		"as each message says ([Static addresses](static-addresses.md#addresses-harvester-manages))."},
	{"SSH: `--harvester-ssh-user`, `--harvester-ssh-port`, `--harvester-ssh-private-key-path`, `--harvester-key-pair-name`, `--harvester-ssh-keypairs`",
		[]string{"harvester/config/parse_ssh.go"},
		"the user is no Linux user name, the port outside 1 to 65535, the private key file missing, too large, protected by a passphrase or not an SSH key; a key pair is named without the private key the driver logs in with; too many key pairs.",
		"as each message says ([SSH keys](vm-options.md#ssh-keys-of-the-people-who-log-in))."},
	{"The guest cloud provider: `--harvester-cloud-provider-*`, `--harvester-generate-cloud-provider-config`",
		[]string{"harvester/config/parse_cloudprovider.go", "harvester/config/validate_cloudprovider.go", "harvester/config/guestfiles.go"},
		"the guest's cloud-provider options do not fit together or name what a guest cannot use: a server that is no `https://<Harvester VIP>:6443` (a Rancher proxy URL, a URL with a password), an account name Kubernetes refuses or the namespace's `default`, the driver's own credential given to the guests, a distribution or drop-in without the kubeconfig it is for.",
		"as each message says ([Guest cloud provider](cloud-provider.md))."},
	{"The guest's operating system: `--harvester-os`", []string{"harvester/config/parse_os.go"},
		"the guest is said to be another system than Linux, the only one the driver builds cloud-init for.",
		"`--harvester-os linux`, or leave it empty."},
	{"Flags that need each other", []string{"harvester/config/validate.go"},
		"an option needs another that is not given (Secure Boot needs EFI, kept EFI variables EFI, a kept TPM the TPM, an isolated emulator thread CPU pinning), boot orders repeat across disks and NICs, or the reserved memory is not below the VM's.",
		"give both, or drop the first; one boot order per disk or NIC."},
	{"A patch of the VM: `--harvester-vm-patch`", []string{"harvester/config/parse_vmpatch.go", "harvester/objects/vmpatch.go", "harvester/objects/vmpatch_read.go"},
		"the patch is no JSON merge patch or JSON patch, does not apply to the VM the driver builds, makes a VM KubeVirt would not read (unknown fields or a field in the wrong case, values of the wrong form, a quantity beyond the driver's bound), is larger than a patched VM may be, changes what the driver owns (anything naming the machine's cloud-init Secret included), or reaches beyond the guest's own (a host disk, a container path, a DRA claim).",
		"`render` with the patch shows the VM it makes; patch other fields than the driver's ([A patch of the VM](vm-options.md#a-patch-of-the-vm-fields-no-flag-covers))."},
	{"User data: `--harvester-user-data` (and the cloud-config rancher-machine gives)",
		[]string{"harvester/config/parse_cloudinit.go", "cloudinit", "cloudinit/internal/yamlnode", "userdata"},
		"the user data is not what cloud-init 22.4 would read as you meant it: YAML it cannot load (a tag, an unquoted value it reads as another type), more than one document, a cloud-config key of the wrong type, a MIME multipart or gzip that does not decode, more than 1 MiB once inflated, or a password chpasswd cannot set.",
		"as each message says; `cloud-init schema --config-file user-data.yaml` checks a cloud-config where cloud-init runs, and `render` shows the merged user data ([VM options](vm-options.md#user-data-and-network-data-kept-in-harvester))."},
	{"Network data: `--harvester-network-data`", []string{"cloudinit/networkconfig"},
		"the network-config is not version 1 or 2 as cloud-init 22.4 renders it: a key of the wrong type, an unknown section or device type, an address without its prefix, a netmask or route cloud-init cannot read.",
		"as each message says; the examples of [Static addresses](static-addresses.md) are valid network-config."},
	{"User data and network data kept in Harvester: `--harvester-user-data-secret`, `--harvester-network-data-secret`",
		[]string{"harvester/config/datasecret.go", "harvester/config/validate_datasecret.go"},
		"the flag names no Secret of the VM namespace as `NAME` or `NAME:KEY` (a value, not a name, given; a namespace; a malformed key), the Secret's data is empty or binary, or the data is given both inline and in a Secret.",
		"as each message says ([User data and network data kept in Harvester](vm-options.md#user-data-and-network-data-kept-in-harvester))."},
	{"The objects a create builds", []string{"harvester/objects"},
		"the cloud-init Secret the create would make holds more than a Kubernetes Secret can; or the machine's objects were to be sent before the pre-flight completed them (an image's storage class or a data Secret not read: the pre-flight's own problems say why).",
		"make the user data smaller (gzip it, or keep large files out of it); fix what the pre-flight refused."},
}

// notFlagProblems are files of flagGroups' packages whose texts are no problem: what render prints in place of
// what only a create learns.
var notFlagProblems = map[string]string{
	"harvester/config/cmdline.go":       "the verbs' command line, told in docs/troubleshooting.md (The command line)",
	"harvester/objects/render.go":       "render's placeholders for what only a create learns (an image's storage class)",
	"harvester/objects/address.go":      "render's comment on the address a create allocates",
	"harvester/objects/vmpatch_refs.go": "the objects a VM names for its guest, and the command that allows one: parts of the VM patch's problems, the pre-flight's and render's",
}

// notShown are the packages whose texts no user of the driver reads, and why. hack/ and e2e/ are the maintainers'
// tools and test bed, and not looked at.
var notShown = map[string]string{
	"harvester/internal/kubefake":   "the tests' Harvester",
	"harvester/internal/configtest": "the tests' flags and credentials",
	"internal/readmetest":           "the tests of the generated sections",
	"internal/release":              "the release's version, read by the tests and the release's tooling (make release-tag-check has its own words)",
	"harvester/internal/lists":      "joins words for the messages of others",
	"harvester/internal/logging":    "the log streams; the lines are their callers'",
	"internal/golden":               "the golden-file tests",
	"internal/testenv":              "what a test does without its tool",
	"internal/hostile":              "the tests' hostile inputs",
	"internal/doccheck":             "this check",
	"internal/uiplugin":             "make ui-extension, at release time",
	"internal/nodedriver":           "make nodedriver-manifests, at release time",
	"internal/version":              "the version string",
}

// goFlagMessages are what Go's flag package says of a command line the verbs tell (config.ParseFlagSet keeps its
// words): src/flag/flag.go, FlagSet.parseOne's failf calls.
var goFlagMessages = []string{"flag provided but not defined: -%s", "flag needs an argument: -%s", "bad flag syntax: %s", "flag: help requested"}

// internalMessages are messages of runtimePackages that no user can meet, each with the reason. Keep it short:
// a message a user may see belongs in docs/troubleshooting.md.
var internalMessages = map[string]string{
	"the driver has no machine configuration: SetConfigFromFlags must run first": "rancher-machine and Rancher always call SetConfigFromFlags before PreCreateCheck",
	"the number of machines to check must be 1 to %d, got %d":                    "the check verb refuses a --count outside 1 to 1000 first, with its own message",
	"unknown type of flag %v: %v":                                                "the driver's own flags are all string, int or bool (internal/rancher's tests)",
	"flag %s does not follow Rancher's naming convention [DRIVER]-[FLAG-NAME]":   "the driver's own flags all do (TestFlagsRoundTripThroughRancher)",
	"flag %s has an empty part between '-'":                                      "the driver's own flags have none (TestFlagsRoundTripThroughRancher)",
	"the machine could not be completed with what the pre-flight read":           "the admission is skipped first when an image, a key pair or a data Secret could not be used, the only ways the completion fails",
	"the pre-flight passed but did not complete the machine's objects":           "a pre-flight whose checks all passed read every image, key pair and data Secret the completion needs",
	"not in a pod with a service account":                                        "kube.ErrNotInCluster: Remove asks nothing then, and says nothing",
}

// goDirs returns the module's package folders users run (PackageDirs).
func goDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := PackageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// flagGroupOf returns the index in flagGroups of file (below root), or -1.
func flagGroupOf(file string) int {
	for i, g := range flagGroups {
		for _, f := range g.files {
			if f == file {
				return i
			}
		}
	}
	for i, g := range flagGroups {
		if slices.Contains(g.files, filepath.ToSlash(filepath.Dir(file))) {
			return i
		}
	}
	return -1
}

// flagPackages are the packages of flagGroups.
func flagPackages() []string {
	var out []string
	for _, g := range flagGroups {
		for _, f := range g.files {
			if strings.HasSuffix(f, ".go") {
				f = filepath.ToSlash(filepath.Dir(f))
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Every Go package users run is looked at: its messages need an entry of docs/troubleshooting.md, or are listed in
// docs/flag-problems.md, or it is named as showing nothing to a user.
func TestEveryPackageIsLookedAt(t *testing.T) {
	flagPkgs := flagPackages()
	for _, dir := range goDirs(t) {
		n := 0
		for _, in := range []bool{slices.Contains(runtimePackages, dir), slices.Contains(flagPkgs, dir), notShown[dir] != ""} {
			if in {
				n++
			}
		}
		if n != 1 {
			t.Errorf("package %s is in %d of runtimePackages, flagGroups and notShown (internal/doccheck/troubleshooting_test.go); put it in one: runtimePackages if a user reads its messages as they are, flagGroups if they are problems of a flag's value, notShown (with the reason) if no user sees them", dir, n)
		}
	}
}

func messagesOf(t *testing.T, dirs []string) []Message {
	t.Helper()
	ms, err := GoMessages(root, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatalf("no message found in %v: the message reader is broken", dirs)
	}
	return ms
}

func guideQuotes(t *testing.T, path string) []Quote {
	t.Helper()
	md, err := ReadFile(root, path)
	if err != nil {
		t.Fatal(err)
	}
	qs := Quotes(md)
	if len(qs) == 0 {
		t.Fatalf("%s quotes no message", path)
	}
	return qs
}

// Every message a user can see — the runtime packages' and the UI extension's — is quoted by an entry of
// docs/troubleshooting.md: a line "> `the message`", with the values it names shown as <placeholders> or examples.
// A message no user can see is in internalMessages, with the reason.
func TestTroubleshootingCoversEveryMessage(t *testing.T) {
	quotes := guideQuotes(t, troubleshooting)
	ui, err := UIMessages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ui) == 0 {
		t.Fatal("no message of the UI extension found: the UI message reader is broken")
	}
	msgs := append(messagesOf(t, runtimePackages), ui...)
	usedInternal := map[string]bool{}
	var missing []string
	for _, m := range msgs {
		if internalMessages[m.Format] != "" {
			usedInternal[m.Format] = true
			continue
		}
		re := Pattern(m.Format)
		if !slices.ContainsFunc(quotes, func(q Quote) bool { return re.MatchString(q.Text) }) {
			missing = append(missing, fmt.Sprintf("%s (%s):\n      > `%s`", m.Pos, m.Sink, Readable(m.Format)))
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d messages a user can see have no entry in %s. Quote each under the heading of what the user was doing, "+
			"as a line \"> `the message`\" (each … is a value: show it as <name> or an example; the fixed words exactly as printed), "+
			"followed by its cause and its fix; or, if no user can meet it, add it to internalMessages with the reason:\n  %s",
			len(missing), troubleshooting, strings.Join(missing, "\n  "))
	}
	for f := range internalMessages {
		if !usedInternal[f] {
			t.Errorf("internalMessages lists %q, which the driver no longer prints: remove it", f)
		}
	}
}

// Every message docs/troubleshooting.md quotes is one the driver (or its UI extension) prints, word for word: a
// message that changed or went, or words no message prints, are not left in the guide (Printed).
func TestTroubleshootingQuotesAreMessages(t *testing.T) {
	ui, err := UIMessages(root)
	if err != nil {
		t.Fatal(err)
	}
	dirs := append(slices.Clone(runtimePackages), flagPackages()...)
	msgs := append(messagesOf(t, dirs), ui...)
	checks, err := CheckNames(root, runtimePackages...)
	if err != nil || len(checks) < 10 {
		t.Fatalf("the check lines' names: %v, %v", checks, err)
	}
	formats := make([]string, len(msgs))
	for i, m := range msgs {
		formats[i] = m.Format
	}
	// The joiners that start with words of their own ("pool %s: %v", "cannot %s %s: %w") print them too.
	joinerMsgs, err := GoJoiners(root, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	joiners := make([]string, len(joinerMsgs))
	for i, j := range joinerMsgs {
		joiners[i] = j.Format
	}
	printed := NewPrinted(append(formats, goFlagMessages...), joiners, checks)
	for _, q := range guideQuotes(t, troubleshooting) {
		if printed.Quote(q.Text) {
			continue
		}
		near := ""
		if i := slices.IndexFunc(msgs, func(m Message) bool { return Pattern(m.Format).MatchString(q.Text) }); i >= 0 {
			near = fmt.Sprintf("\n  it holds %s, with words around it no message prints (a leading or trailing … marks a part left out)", msgs[i])
		}
		t.Errorf("%s:%d quotes a message the driver does not print (changed or gone? quote it as printed now, or remove the entry):\n  %s%s",
			troubleshooting, q.Line, q.Text, near)
	}
}

const (
	flagProblemsStart = "<!-- flag-problems:start (generated from the flag parsers' messages: go test ./internal/doccheck -run FlagProblems -update-docs) -->"
	flagProblemsEnd   = "<!-- flag-problems:end -->"
)

// flagProblemsMarkdown renders every message of flagGroups under its group's heading, each once, in the order of
// the source.
func flagProblemsMarkdown(t *testing.T) string {
	t.Helper()
	groups := make([][]string, len(flagGroups))
	for _, m := range messagesOf(t, flagPackages()) {
		file, _, _ := strings.Cut(m.Pos, ":")
		if notFlagProblems[file] != "" {
			continue
		}
		g := flagGroupOf(file)
		if g < 0 {
			t.Errorf("%s has messages but no group in flagGroups (internal/doccheck/troubleshooting_test.go): give it one, then run go test ./internal/doccheck -run FlagProblems -update-docs", file)
			continue
		}
		text := Readable(m.Format)
		if m.Flag != "" { // as the user reads it
			text = "--" + m.Flag + ": " + text
		}
		text = codeSpan(text)
		if !slices.Contains(groups[g], text) {
			groups[g] = append(groups[g], text)
		}
	}
	var b strings.Builder
	for i, g := range flagGroups {
		if g.cause == "" || g.fix == "" {
			t.Errorf("flagGroups' %q has no cause or no fix: give both, as a troubleshooting entry has them", g.title)
		}
		if len(groups[i]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", g.title)
		for _, text := range groups[i] {
			fmt.Fprintf(&b, "- %s\n", text)
		}
		fmt.Fprintf(&b, "\n%s\n", wrap("**Cause**: "+g.cause+" **Fix**: "+g.fix, 115))
	}
	return b.String() + "\n"
}

// wrap breaks text into lines of at most width characters at its spaces (a line break is a space to Markdown, in
// a code span or a link's text too).
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(text) {
		if n := utf8.RuneCountInString(w); i > 0 && line+1+n > width {
			b.WriteString("\n")
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += utf8.RuneCountInString(w)
	}
	return b.String()
}

// codeSpan renders s as a Markdown code span, with as many backticks around it as it needs.
func codeSpan(s string) string {
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// docs/flag-problems.md lists every message the flag parsers can print, under the group of flags it is about.
// go test ./internal/doccheck -run FlagProblems -update-docs rewrites the list.
func TestFlagProblems(t *testing.T) {
	readmetest.Generated(t, filepath.Join(root, flagProblems), flagProblemsStart, flagProblemsEnd, flagProblemsMarkdown(t),
		"go test ./internal/doccheck -run FlagProblems -update-docs", *updateDocs)
}

const (
	contentsStart = "<!-- contents:start (generated from the headings: go test ./internal/doccheck -run Contents -update-docs) -->"
	contentsEnd   = "<!-- contents:end -->"
)

// docs/troubleshooting.md opens with a list of its sections, each a link to its heading, in their order.
// go test ./internal/doccheck -run Contents -update-docs rewrites it.
func TestTroubleshootingContents(t *testing.T) {
	md, err := ReadFile(root, troubleshooting)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range Prose(md) {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			fmt.Fprintf(&b, "- [%s](#%s)\n", strings.TrimSpace(title), Slug(title))
		}
	}
	if b.Len() == 0 {
		t.Fatalf("%s has no sections", troubleshooting)
	}
	readmetest.Generated(t, filepath.Join(root, troubleshooting), contentsStart, contentsEnd, b.String(),
		"go test ./internal/doccheck -run Contents -update-docs", *updateDocs)
}
