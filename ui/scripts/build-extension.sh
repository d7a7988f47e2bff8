#!/usr/bin/env bash
# Builds the UI extension ui/pkg/hcivm with @rancher/shell's build-pkg, checks the build in headless Chromium, packs
# it into the archive a UIPlugin's compressedEndpoint names (hack/uiplugin: <version>/plugin/… and
# <version>/files.txt) and writes it to ui/dist/hcivm-ui-<version>.tgz, the one archive there; prints that path.
# With --dir it prints the directory of the build instead (the UMD and stylesheet build-pkg wrote, kept in the
# cache), for the browser check of `npm test`.
#
# The archive is cached in ~/.cache/docker-machine-driver-harvester/ui-extension-<key>, the key a hash of
# everything the build reads (the workspace's package files and lock, the extension's sources, the packer, this
# script, the Node version): a second run with the same inputs copies it and needs neither npm nor a network, so
# `make release-snapshot` (whose goreleaser runs `make ui-extension` first) works offline once it has built.
# The Node modules come from the npm registry (ui/package-lock.json, npm's cache beside the archive's).
set -euo pipefail
ui="$(cd "$(dirname "$0")/.." && pwd)"
root=$(dirname "$ui")
cache_root=${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}
name=hcivm
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ui/pkg/$name/package.json")
[ -n "$version" ] || { echo "ui-extension: no version in ui/pkg/$name/package.json" >&2; exit 1; }
out=$ui/dist/$name-ui-$version.tgz
command -v node >/dev/null || { echo "ui-extension: node is missing (Node.js 20 or later)" >&2; exit 1; }

inputs() { # names and contents of what the archive is built from, in a fixed order
	(
		cd "$root"
		{
			printf '%s\n' ui/package.json ui/package-lock.json ui/.npmrc ui/vue.config.js ui/scripts/build-extension.sh
			find "ui/pkg/$name" \( -name node_modules -o -name .shell \) -prune -o -type f -print
			find internal/uiplugin hack/uiplugin -name '*.go' ! -name '*_test.go'
		} | LC_ALL=C sort | while read -r f; do
			printf '%s\n' "$f"
			cat "$f"
		done
	)
	node --version
}
key=$(inputs | sha256sum | cut -c1-16)
cached=$cache_root/ui-extension-$key/$name-ui-$version.tgz

build() { # build into the cache: install, build-pkg, browser check, pack
	DMDH_CACHE=$cache_root "$ui/scripts/deps.sh"
	(cd "$ui" && npm run build-pkg -- "$name") >&2
	"$ui/scripts/install-chromium.sh" >&2
	(cd "$ui" && node test/browser/bundle.mjs && node test/browser/run.mjs --built "dist-pkg/$name-$version") >&2
	local tmp
	tmp=$(mktemp -d "$cache_root/.ui-extension.XXXXXX")
	cp -r "$ui/dist-pkg/$name-$version" "$tmp/built"
	(cd "$root" && go run ./hack/uiplugin -dir "ui/dist-pkg/$name-$version" -name "$name" -version "$version" -out "$tmp/$name-ui-$version.tgz") ||
		{ rm -rf "$tmp"; return 1; }
	rm -rf "$(dirname "$cached")"
	mv "$tmp" "$(dirname "$cached")"
}

if [ ! -f "$cached" ]; then
	mkdir -p "$cache_root"
	exec 9>"$cache_root/.lock-ui-extension"
	flock 9
	# Another run may have finished the build while this one waited for the lock.
	[ -f "$cached" ] || build
	exec 9>&-
fi
if [ "${1:-}" = --dir ]; then
	echo "$(dirname "$cached")/built"
	exit 0
fi
mkdir -p "$ui/dist"
rm -f "$ui/dist/$name-ui-"*.tgz
cp "$cached" "$out"
echo "${out#"$root"/}"
