package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// write makes files (path below dir → content) and returns dir.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func formatsOf(ms []Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Format
	}
	return out
}

// The messages of a package are what its sinks are given: literals, sums of them, constants; a function of
// another package that takes a format counts; Debugf, a panic's text, a write to stdout and joiners do not.
func TestGoMessages(t *testing.T) {
	root := write(t, map[string]string{
		"harvester/p/p.go": `package p

import (
	"errors"
	"fmt"
	"os"
)

const why = "the disk is not there at all"

func f(stdout, stderr *os.File, n int) error {
	q.Addf("harvester-disk-size", "must be at most %d GiB, got %d", 8, n)
	logging.Infof("Creating VM %s/%s on Harvester", "a", "b")
	logging.Debugf("detail only the debug log shows: %v", n)
	fmt.Fprintf(stderr, "render: %s\nusage: render --machine-name NAME\n", "x")
	fmt.Fprintf(stdout, "the checks go to stdout: %d\n", n)
	if n > 3 {
		panic(fmt.Sprintf("a check is in the table twice: %d", n))
	}
	_ = fmt.Errorf("%s: %w", "joiner", errors.New(why))
	return fmt.Errorf("the VM %s keeps failing "+"to start (%s)", "a", fmt.Sprint(n))
}
`,
		"harvester/q/q.go": `package q

type Problems struct{}

func (p *Problems) Addf(flag, format string, args ...any) {}
`,
		"internal/logging/logging.go": `package logging

func Infof(format string, args ...any)  {}
func Debugf(format string, args ...any) {}
`,
	})
	got, err := GoMessages(root, "harvester/p")
	if err != nil {
		t.Fatal(err)
	}
	formats := formatsOf(got)
	want := []string{
		"must be at most %d GiB, got %d",
		"Creating VM %s/%s on Harvester",
		"render: %s\nusage: render --machine-name NAME\n",
		"the disk is not there at all",
		"the VM %s keeps failing to start (%s)",
	}
	if !reflect.DeepEqual(formats, want) {
		t.Errorf("messages\n%q\nwant\n%q", formats, want)
	}
}

// A message's pattern matches a quote that shows its values as <placeholders> or examples, across the line breaks
// of a guide, and nothing that changes its fixed words.
func TestPattern(t *testing.T) {
	for _, tc := range []struct {
		format, quote string
		match         bool
	}{
		{"image %s is not ready: it is still being imported (progress %d%%); wait", "image default/jammy is not ready: it is still being imported (progress 40%); wait", true},
		{"VM %s/%s is gone", "VM <ns>/<name> is gone", true},
		{"VM %s/%s is gone", "VM <ns>/<name> is\n  gone", true},
		{"VM %s/%s is gone", "VM <ns>/<name> has gone", false},
		{"Disk {n}: choose an image.", "Disk 2: choose an image.", true},
		{"{count, plural, one {# host} other {# hosts}} ready", "3 hosts ready", true},
		{"render: %s\nusage: render --machine-name NAME […]", "render: bad flag usage: render --machine-name NAME […]", true},
	} {
		if got := Pattern(tc.format).MatchString(Normalize(tc.quote)); got != tc.match {
			t.Errorf("Pattern(%q) on %q: %v, want %v", tc.format, tc.quote, got, tc.match)
		}
	}
}

// The UI extension's messages come from its l10n file (errors and …Error/…Warning keys) and from its code.
func TestUIMessages(t *testing.T) {
	root := write(t, map[string]string{
		UIL10n: `hcivm:
  machineConfig:
    loadError: "Could not read the cloud credential: {error}"
    cpuManagerWarning: No Harvester host runs the CPU manager, so pinning is off.
    fields:
      cpuCount:
        label: CPUs of the virtual machine
    errors:
      diskImage: "Volume {n}: choose an image."
`,
		"ui/pkg/hcivm/lib/validate.js": "add('vmNamespace', 'Choose the namespace the VMs are made in.');\n" +
			"add(field, `${ name }: ${ n } wanted by the pool, ${ have } free.`);\n" +
			"const label = 'not a message of an error at all';\n",
		"ui/pkg/hcivm/x.vue": "this.error = `Rancher could not make a kubeconfig for ${ id }: ${ e }`;\n" +
			"return ok ? true : { errors: [this.source === 'cluster' ? 'Choose a Harvester cluster.' : 'Paste the Harvester kubeconfig.'] };\n",
		"ui/pkg/hcivm/node_modules/dep/index.js": "add('x', 'a message of a dependency, not ours');\n",
	})
	got, err := UIMessages(root)
	if err != nil {
		t.Fatal(err)
	}
	formats := formatsOf(got)
	want := []string{ // the l10n file's by key, then the code's by file and line
		"No Harvester host runs the CPU manager, so pinning is off.",
		"Volume {n}: choose an image.",
		"Could not read the cloud credential: {error}",
		"Choose the namespace the VMs are made in.",
		"{x}: {x} wanted by the pool, {x} free.",
		"Rancher could not make a kubeconfig for {x}: {x}",
		"Choose a Harvester cluster.",
		"Paste the Harvester kubeconfig.",
	}
	if !reflect.DeepEqual(formats, want) {
		t.Errorf("UI messages\n%q\nwant\n%q", formats, want)
	}
}

// A quote is a code span on a blockquote line, of one or more backticks; code elsewhere is not.
func TestQuotes(t *testing.T) {
	md := "Text with `code`.\n\n> `VM <ns>/<name> is\tgone`\n\n> ``a `quoted` word``\n\n```\n> `in a fence`\n```\n"
	got := Quotes(md)
	want := []Quote{{"VM <ns>/<name> is gone", 3}, {"a `quoted` word", 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("quotes %+v, want %+v", got, want)
	}
}
