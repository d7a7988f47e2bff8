package release

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/readmetest"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the install, upgrade and download commands of the README and the guides from the release's version")

const regenerate = "go test ./internal/release -run README -update-readme"

// sections are the generated commands of the guides, each a start marker and its body for version.
var sections = []struct {
	name  string
	files []string
	body  func(version string) string
}{
	{"install", []string{"README.md", "docs/install-rancher.md", "docs/ui-extension.md"}, func(v string) string {
		return "```sh\n" + InstallCommand(v) + "\n# then reload the dashboard: Extensions lists \"hcivm\", the cluster form offers the driver Hcivm with these forms\n```\n"
	}},
	{"upgrade", []string{"docs/install-rancher.md", "docs/day-two.md"}, func(v string) string {
		return "```sh\n" + UpgradeCommand(v) + "\n```\n"
	}},
	// Route 1's upgrade: the release's source, the derived image tagged with both versions (a tag that changes, so
	// that every node pulls it: Rancher's chart pulls IfNotPresent), and Rancher's chart pointed at it.
	{"rancher-image", []string{"docs/day-two.md"}, func(v string) string {
		tag := "v2.13.1-harvester-" + v
		return "```sh\ngit clone --depth 1 --branch " + Tag(v) + " " + Repository + " && cd docker-machine-driver-harvester\n" +
			"make rancher-image RANCHER_VERSION=v2.13.1 RANCHER_IMAGE=registry.example.com/rancher/rancher:" + tag + " \\\n" +
			"  PLATFORMS=linux/amd64,linux/arm64 PUSH=1\n" +
			"helm upgrade rancher rancher-stable/rancher -n cattle-system --version 2.13.1 --reuse-values \\\n" +
			"  --set image.repository=registry.example.com/rancher/rancher --set image.tag=" + tag + "\n```\n"
	}},
	{"download", []string{"README.md"}, func(v string) string {
		archive := "docker-machine-driver-harvester-amd64.tar.gz"
		return "```sh\ncurl -fLO " + URL(v, archive) + "\ncurl -fL " + URL(v, "sha256sums.txt") + " | sha256sum --check --ignore-missing\n" +
			"sudo tar -xzf " + archive + " -C /usr/local/bin   # the one file docker-machine-driver-harvester\n```\n"
	}},
}

func marker(name, end string) string {
	if end != "" {
		return "<!-- " + name + ":end -->"
	}
	return "<!-- " + name + ":start (generated from the release version, " + VersionFile + ": " + regenerate + ") -->"
}

// The guides give the commands of the release this checkout makes, with its version written out: nothing for the
// reader to fill in, and no tag of the existing driver's releases.
func TestREADMECommandsNameTheRelease(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	version, err := Version(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		for _, f := range s.files {
			readmetest.Generated(t, filepath.Join(root, f), marker(s.name, ""), marker(s.name, "end"), s.body(version), regenerate, *updateREADME)
		}
	}
	for _, f := range []string{"README.md", "docs/install-rancher.md", "docs/ui-extension.md", "docs/day-two.md"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "<tag>") {
			t.Errorf("%s leaves the reader a <tag> to guess: name the release, %s", f, Tag(version))
		}
	}
}

func TestVersionIsAboveTheExistingDriver(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{"1.1.0", true}, {"1.0.7", true}, {"2.0.0", true}, {"1.0.10", true},
		{"1.0.6", false}, {"0.1.0", false}, {"1.0.5", false}, {"0.9.9", false},
		{"v1.1.0", false}, {"1.1", false}, {"1.1.0-rc1", false}, {"01.1.0", false}, {"", false},
	} {
		if err := Newer(c.version); (err == nil) != c.ok {
			t.Errorf("Newer(%q) = %v, want ok=%v", c.version, err, c.ok)
		}
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Version(root); err != nil {
		t.Error(err)
	}
	// make release-tag-check (hack/helm-chart.sh) refuses the same versions.
	script, err := os.ReadFile(filepath.Join(root, "hack", "helm-chart.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "\nexisting="+ExistingDriver+"\n") {
		t.Errorf("hack/helm-chart.sh does not say existing=%s, the existing driver's newest release", ExistingDriver)
	}
}

func TestURLs(t *testing.T) {
	if got, want := URL("1.1.0", ChartFile("1.1.0")), "https://github.com/harvester/docker-machine-driver-harvester/releases/download/v1.1.0/hcivm-1.1.0.tgz"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	if got := UIArchive("1.1.0"); got != "hcivm-ui-1.1.0.tgz" {
		t.Errorf("UIArchive = %s", got)
	}
}
