#!/usr/bin/env bash
# helm-chart.sh packages the chart of the second driver name (package/helm/hcivm) for one release:
#
#   hack/helm-chart.sh [--snapshot] <checksum file> <release tag> <extension version> <chart .tgz>
#   hack/helm-chart.sh --check-tag <release tag> <extension version>
#   hack/helm-chart.sh --check-version <extension version>
#
# It writes the NodeDriver manifests for the release's archives into the chart's files/ (hack/nodedriver: URL,
# sha256 from the checksum file, whitelist domain, credential fields), sets the chart's version and appVersion and
# its icon, and packs the chart reproducibly. Nothing of the release goes into values.yaml: the templates make every
# URL of .Chart.AppVersion, since helm upgrade --reuse-values keeps the values of the release installed before.
# goreleaser runs it (through `make helm-chart`) once the checksum file exists: see .goreleaser.yaml, signs.
#
# One version for the chart, its appVersion and the UI extension (ui/pkg/hcivm/package.json), which the UIPlugin
# loads by it (the archive's <version>/ folder and the main file's name): Rancher's Extensions page tells the
# installed version and an upgrade by comparing the UIPlugin's version with the chart's version in 2.12
# (rancher/dashboard v2.12.12 shell/pages/c/_cluster/uiplugins/index.vue, available: p.version !==
# chart.installableVersions[0].version) and with its appVersion, else version, since 2.13 (v2.13.8 and v2.14.4 the
# same file, `appVersion ?? version`; shell/utils/uiplugins.ts). rancher/dashboard's own
# shell/scripts/extension/publish likewise refuses a release tag that is not the extension's version. So a
# release's tag must be v<extension version> (--check-tag, which goreleaser runs before building); a snapshot
# (--snapshot) packs the chart the tag v<extension version> would publish, whatever its own tag.
#
# The icon is ui/pkg/hcivm/icon.svg, the one the extension registers for the driver's tile, as a data: URL: the
# dashboard shows a chart's icon as an <img> source (rancher/dashboard shell/store/catalog.js `icon: chart.icon`;
# v2.15.0 uiplugins/index.vue takes the installed App's chart icon), so it shows without any download, air-gapped
# too; helm lint accepts it (a request URL with a scheme).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# existing is the newest tag of the existing driver's releases in the repository the release is published in
# (harvester/docker-machine-driver-harvester: v0.1.0 to v1.0.6); a release above it names none of them
# (internal/release, ExistingDriver).
existing=v1.0.6

# check_tag refuses a release tag that is not v<extension version>, or a version that is not above $existing.
check_tag() {
	[ "$1" = "v$2" ] || {
		echo "helm-chart: the release tag $1 is not v$2, the release's version (ui/pkg/hcivm/package.json \"version\", which the chart, its appVersion, the extension and the driver's --version share, and which Rancher's Extensions page compares): tag the release v$2 (to release another version, set it there first)" >&2
		exit 1
	}
	check_version "$2"
}

# check_version refuses a version that is not MAJOR.MINOR.PATCH above $existing.
check_version() {
	[[ "$1" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] &&
		[ "$(printf '%s\n' "${existing#v}" "$1" | sort -V | tail -n1)" = "$1" ] && [ "$1" != "${existing#v}" ] || {
		echo "helm-chart: the release's version $1 (ui/pkg/hcivm/package.json) is not a MAJOR.MINOR.PATCH above $existing, the existing driver's newest release in harvester/docker-machine-driver-harvester: its tag would name one of those releases" >&2
		exit 1
	}
}

if [ "${1:-}" = --check-version ]; then
	[ $# = 2 ] || { echo "usage: $0 --check-version <extension version>" >&2; exit 2; }
	check_version "$2"
	exit 0
fi
if [ "${1:-}" = --check-tag ]; then
	[ $# = 3 ] || { echo "usage: $0 --check-tag <release tag> <extension version>" >&2; exit 2; }
	check_tag "$2" "$3"
	exit 0
fi
snapshot=false
if [ "${1:-}" = --snapshot ]; then
	snapshot=true
	shift
fi
[ $# = 4 ] || { echo "usage: $0 [--snapshot] <checksum file> <release tag> <extension version> <chart .tgz>" >&2; exit 2; }
checksums=$1 tag=$2 version=$3 out=$4
if [ "$snapshot" = true ]; then
	# A snapshot is the chart the release v<version> would publish: every URL in it names that tag.
	check_version "$version"
	tag=v$version
else
	check_tag "$tag" "$version"
fi
[ -f "$checksums" ] || { echo "helm-chart: no checksum file $checksums: build the release first (make release-snapshot)" >&2; exit 1; }
icon=$root/ui/pkg/hcivm/icon.svg
[ -f "$icon" ] || { echo "helm-chart: no $icon, the chart's icon" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/package/helm/hcivm" "$tmp/hcivm"
mkdir "$tmp/hcivm/files"
(cd "$root" && go run ./hack/nodedriver -version "$tag" -checksums "$checksums" -out "$tmp/hcivm/files") >/dev/null
sed -i "s/^version: .*/version: $version/; s/^appVersion: .*/appVersion: $version/" "$tmp/hcivm/Chart.yaml"
sed -i "s|^icon: .*|icon: data:image/svg+xml;base64,$(base64 -w0 "$icon")|" "$tmp/hcivm/Chart.yaml"
grep -q '^icon: data:image/svg+xml;base64,' "$tmp/hcivm/Chart.yaml" || { echo "helm-chart: Chart.yaml has no icon: line to set" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tar -C "$tmp" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - hcivm | gzip -n >"$out"
echo "$out"
