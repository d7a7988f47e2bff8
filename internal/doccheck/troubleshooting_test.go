package doccheck

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	"harvester/connection",
	"harvester/guestaccount",
	"harvester/identity",
	"harvester/internal/kube",
	"harvester/ippool",
	"internal/rancher",
}

// flagGroups are the packages and files whose messages are problems of a flag's value, printed as --flag: message
// under "invalid machine configuration" before anything is made (config.Problems). docs/flag-problems.md lists
// them, generated, under the heading of their file's group.
var flagGroups = []struct {
	title string
	files []string // a package's folder (all its files) or one file, below the module's root
}{
	{"The Harvester credential: `--harvester-kubeconfig-content` (and the kubeconfig given to guests, `--harvester-cloud-provider-config`)",
		[]string{"harvester/config/kubeconfig_content.go", "harvester/config/inline_credential.go", "harvester/config/parse_kubeconfig.go"}},
	{"Any flag: numbers, booleans, lengths, names", []string{"harvester/config/options.go", "harvester/config/parse.go",
		"harvester/config/refs.go", "harvester/config/parse_timeout.go", "harvester/config/config.go", "harvester/config/flags.go",
		"harvester/config/redact.go", "harvester/config/keys.go", "harvester/config/subnet.go", "harvester/config/doc.go"}},
	{"JSON values: `--harvester-disk-info`, `--harvester-network-info`, `--harvester-vgpu-info`, `--harvester-host-device-info`, `--harvester-vm-affinity`, `--harvester-vm-patch`",
		[]string{"harvester/config/jsonflag.go", "harvester/config/yamldoc.go"}},
	{"Disks: `--harvester-disk-info`, `--harvester-disk-size`, `--harvester-disk-bus`, `--harvester-image-name`",
		[]string{"harvester/config/parse_disks.go", "harvester/objects/volumes.go"}},
	{"Networks and vGPUs: `--harvester-network-info`, `--harvester-network-name`, `--harvester-network-model`, `--harvester-vgpu-info`",
		[]string{"harvester/config/parse_nics.go"}},
	{"Host devices: `--harvester-host-device-info`", []string{"harvester/config/parse_hostdevices.go"}},
	{"Placement: `--harvester-vm-affinity`, `--harvester-zone`, `--harvester-region`, `--harvester-vm-labels`, the strategies",
		[]string{"harvester/config/parse_affinity.go", "harvester/config/parse_labels.go", "harvester/config/parse_strategies.go"}},
	{"Static addresses: `--harvester-ip-pool` and its gateway, DNS servers and search domains",
		[]string{"harvester/config/parse_ippool.go", "harvester/config/validate_ippool.go", "harvester/config/problems.go"}},
	{"SSH: `--harvester-ssh-user`, `--harvester-ssh-port`, `--harvester-ssh-private-key-path`, `--harvester-key-pair-name`, `--harvester-ssh-keypairs`",
		[]string{"harvester/config/parse_ssh.go"}},
	{"The guest cloud provider: `--harvester-cloud-provider-*`, `--harvester-generate-cloud-provider-config`",
		[]string{"harvester/config/parse_cloudprovider.go", "harvester/config/validate_cloudprovider.go", "harvester/config/guestfiles.go"}},
	{"The guest's operating system: `--harvester-os`", []string{"harvester/config/parse_os.go"}},
	{"Flags that need each other", []string{"harvester/config/validate.go"}},
	{"A patch of the VM: `--harvester-vm-patch`", []string{"harvester/config/parse_vmpatch.go", "harvester/objects/vmpatch.go"}},
	{"User data: `--harvester-user-data` (and the cloud-config rancher-machine gives)",
		[]string{"harvester/config/parse_cloudinit.go", "cloudinit", "cloudinit/internal/yamlnode", "userdata"}},
	{"Network data: `--harvester-network-data`", []string{"cloudinit/networkconfig"}},
	{"User data and network data kept in Harvester: `--harvester-user-data-secret`, `--harvester-network-data-secret`",
		[]string{"harvester/config/datasecret.go", "harvester/config/validate_datasecret.go"}},
	{"The objects a create builds", []string{"harvester/objects"}},
}

// notFlagProblems are files of flagGroups' packages whose texts are no problem: what render prints in place of
// what only a create learns.
var notFlagProblems = map[string]string{
	"harvester/objects/render.go":  "render's placeholders for what only a create learns (an image's storage class)",
	"harvester/objects/address.go": "render's comment on the address a create allocates",
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

// internalMessages are messages of runtimePackages that no user can meet, each with the reason. Keep it short:
// a message a user may see belongs in docs/troubleshooting.md.
var internalMessages = map[string]string{
	"the driver has no machine configuration: SetConfigFromFlags must run first": "rancher-machine and Rancher always call SetConfigFromFlags before PreCreateCheck",
	"the number of machines to check must be 1 to %d, got %d":                    "the check verb refuses a --count outside 1 to 1000 first, with its own message",
	"unknown type of flag %v: %v":                                                "the driver's own flags are all string, int or bool (internal/rancher's tests)",
	"flag %s does not follow Rancher's naming convention [DRIVER]-[FLAG-NAME]":   "the driver's own flags all do (TestFlagsRoundTripThroughRancher)",
	"flag %s has an empty part between '-'":                                      "the driver's own flags have none (TestFlagsRoundTripThroughRancher)",
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

// Every message docs/troubleshooting.md quotes is one the driver (or its UI extension) can print: a message that
// changed or went is not left in the guide.
func TestTroubleshootingQuotesAreMessages(t *testing.T) {
	ui, err := UIMessages(root)
	if err != nil {
		t.Fatal(err)
	}
	msgs := append(messagesOf(t, append(slices.Clone(runtimePackages), flagPackages()...)), ui...)
	for _, q := range guideQuotes(t, troubleshooting) {
		if !slices.ContainsFunc(msgs, func(m Message) bool { return Pattern(m.Format).MatchString(q.Text) }) {
			t.Errorf("%s:%d quotes a message the driver does not print (changed or gone? quote it as printed now, or remove the entry):\n  %s",
				troubleshooting, q.Line, q.Text)
		}
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
		text := codeSpan(Readable(m.Format))
		if !slices.Contains(groups[g], text) {
			groups[g] = append(groups[g], text)
		}
	}
	var b strings.Builder
	for i, g := range flagGroups {
		if len(groups[i]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", g.title)
		for _, text := range groups[i] {
			fmt.Fprintf(&b, "- %s\n", text)
		}
	}
	return b.String() + "\n"
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
