// Package release is the release's one version and what follows from it: the tag, where the release's files are
// downloaded from, and the install commands the guides give.
//
// The version is the UI extension's, ui/pkg/hcivm/package.json "version" (VersionFile): the one place it is
// written. The Makefile reads it (the driver's --version of a local build, `make release-tag-check`, the chart),
// goreleaser through the Makefile (its before hook refuses a tag that is not Tag(version); a snapshot is built as
// that version), hack/helm-chart.sh through its arguments, and the tests through Version. One version for all
// because Rancher compares the UIPlugin's version with the chart's (hack/helm-chart.sh says where), and the
// chart names the release's files by it.
//
// The repository the guides download from already holds the existing driver's releases, tags v0.1.0 to v1.0.6
// (harvester/docker-machine-driver-harvester; Rancher v2.14.4 and v2.15.0 ship v1.0.6, package/Dockerfile
// DOCKER_MACHINE_HARVESTER_VERSION). A release must be above them (Newer), or its tag would name one of their
// releases; the module path has no /v2, so it stays on v1.
package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

const (
	// VersionFile holds the release's version, relative to the repository's root.
	VersionFile = "ui/pkg/hcivm/package.json"
	// Repository is where the release is published.
	Repository = "https://github.com/harvester/docker-machine-driver-harvester"
	// DownloadBase is where a release's files are downloaded from: <DownloadBase>/<tag>/<file>.
	DownloadBase = Repository + "/releases/download"
	// ExistingDriver is the newest tag of the existing driver's releases in Repository.
	ExistingDriver = "v1.0.6"
	// Chart names the Helm chart (package/helm/hcivm) and its UI extension.
	Chart = "hcivm"
	// Namespace is the one namespace Rancher reads UI extensions from (rancher/rancher pkg/namespace
	// UIPluginNamespace), where the chart must be installed.
	Namespace = "cattle-ui-plugin-system"
)

// semver is the release version's form: MAJOR.MINOR.PATCH, no pre-release or build part (a tag is v and this).
var semver = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`)

// Version reads the release's version from VersionFile under the repository's root, and checks it is a
// MAJOR.MINOR.PATCH above ExistingDriver.
func Version(root string) (string, error) {
	path := filepath.Join(root, VersionFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", fmt.Errorf("%s: %v", VersionFile, err)
	}
	if err := Newer(pkg.Version); err != nil {
		return "", fmt.Errorf("%s: %v", VersionFile, err)
	}
	return pkg.Version, nil
}

// Newer checks that version is a MAJOR.MINOR.PATCH above ExistingDriver.
func Newer(version string) error {
	v, ok := parse(version)
	if !ok {
		return fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", version)
	}
	existing, _ := parse(strings.TrimPrefix(ExistingDriver, "v"))
	for i := range v {
		if v[i] != existing[i] {
			if v[i] > existing[i] {
				return nil
			}
			break
		}
	}
	return fmt.Errorf("version %s is not above %s, the existing driver's newest release in %s: its tag would name one of those releases", version, ExistingDriver, Repository)
}

func parse(version string) ([3]int, bool) {
	m := semver.FindStringSubmatch(version)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

// Tag is the release tag of version.
func Tag(version string) string { return "v" + version }

// URL is where the release of version publishes file.
func URL(version, file string) string { return DownloadBase + "/" + Tag(version) + "/" + file }

// ChartFile is the chart's package, hcivm-<version>.tgz.
func ChartFile(version string) string { return Chart + "-" + version + ".tgz" }

// UIArchive is the UI extension's archive, hcivm-ui-<version>.tgz, which the chart's UIPlugin names.
func UIArchive(version string) string { return Chart + "-ui-" + version + ".tgz" }

// InstallCommand is the command that installs the chart of version on Rancher's local cluster, for a Rancher
// server of architecture amd64 (the guides say to change arch for arm64).
func InstallCommand(version string) string {
	return "helm install " + Chart + " \\\n  " + URL(version, ChartFile(version)) + " \\\n  -n " + Namespace + " --create-namespace --set arch=amd64"
}

// UpgradeCommand is the command that upgrades an installed chart to the one of version, keeping the values given
// at install (arch, the plugin's settings); what the chart computes from its version comes from the chart, never
// from a value kept (package/helm/hcivm/templates).
func UpgradeCommand(version string) string {
	return "helm upgrade " + Chart + " \\\n  " + URL(version, ChartFile(version)) + " \\\n  -n " + Namespace + " --reuse-values"
}
