#!/usr/bin/env bash
# helm-chart.sh packages the chart of the second driver name (package/helm/hcivm) for one release:
#
#   hack/helm-chart.sh <checksum file> <release tag> <chart version> <extension version> <chart .tgz>
#
# It writes the NodeDriver manifests for the release's archives into the chart's files/ (hack/nodedriver: URL,
# sha256 from the checksum file, whitelist domain, credential fields), sets the chart's version, appVersion (the
# UI extension's version, which its UIPlugin loads) and release, and packs the chart reproducibly. goreleaser
# runs it (through `make helm-chart`) once the checksum file exists: see .goreleaser.yaml, signs.
set -euo pipefail
[ $# = 5 ] || { echo "usage: $0 <checksum file> <release tag> <chart version> <extension version> <chart .tgz>" >&2; exit 2; }
checksums=$1 tag=$2 chart_version=$3 ui_version=$4 out=$5
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$checksums" ] || { echo "helm-chart: no checksum file $checksums: build the release first (make release-snapshot)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/package/helm/hcivm" "$tmp/hcivm"
mkdir "$tmp/hcivm/files"
(cd "$root" && go run ./hack/nodedriver -version "$tag" -checksums "$checksums" -out "$tmp/hcivm/files") >/dev/null
sed -i "s/^version: .*/version: $chart_version/; s/^appVersion: .*/appVersion: $ui_version/" "$tmp/hcivm/Chart.yaml"
sed -i "s/^release: \"\"/release: \"$tag\"/" "$tmp/hcivm/values.yaml"
grep -q "^release: \"$tag\"$" "$tmp/hcivm/values.yaml" || { echo "helm-chart: values.yaml has no release: \"\" line to set" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tar -C "$tmp" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - hcivm | gzip -n >"$out"
echo "$out"
