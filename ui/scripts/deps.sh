#!/usr/bin/env bash
# Installs the UI extension's Node modules (ui/package-lock.json: @rancher/shell and its build toolchain, Jest,
# playwright-core, esbuild) from the npm registry into ui/node_modules, with no package's install script
# (ui/.npmrc); npm's download cache is ~/.cache/docker-machine-driver-harvester/npm. Idempotent: nothing happens
# while node_modules matches the lock file (installed by this script, or by `npm ci` since the lock last changed).
# The installed tree is kept in the tool cache by the lock file's hash, and a new checkout gets it as hard links
# (a copy where links cannot be made) in seconds instead of `npm ci`'s minutes. No browser is downloaded (the
# browser check uses Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "ui deps: npm is missing (Node.js 20 or later)" >&2; exit 1; }
stamp=node_modules/.dmdh-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
cache="${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}"
kept="$cache/ui-node-modules-${want:0:16}"

# linked copies the tree $1 to $2: hard links (npm replaces a file, it never writes into one in place), or a copy.
linked() { cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2" && cp -a "$1" "$2"; }; }

# keep puts node_modules, as installed for the lock file, in the tool cache once, without what builds wrote into it
# since (.cache) or this script's stamp. The trees of the three lock files last kept stay (checkouts of different
# branches share the cache: one tree each would have each checkout remove the other's); older ones are removed.
keep() {
	[ -f "$kept/.complete" ] && return 0
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.ui-node-modules.XXXXXX")
	if linked node_modules "$tmp/node_modules" && rm -rf "$tmp/node_modules/.cache" "$tmp/$stamp" && touch "$tmp/.complete"; then
		rm -rf "$kept" && mv -T "$tmp" "$kept" || rm -rf "$tmp"
		# shellcheck disable=SC2012 # the names are ui-node-modules-<hex>: ls -t orders them by age
		ls -1dt "$cache"/ui-node-modules-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
	else
		rm -rf "$tmp"
	fi
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	keep
	exit 0
fi
# npm writes node_modules/.package-lock.json at the end of an install.
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] && [ node_modules/.package-lock.json -nt package.json ]; then
	echo "$want" >"$stamp"
	keep
	exit 0
fi
if [ -f "$kept/.complete" ]; then
	rm -rf node_modules
	linked "$kept/node_modules" node_modules
	echo "$want" >"$stamp"
	echo "ui deps: node_modules from the tool cache ($kept)" >&2
	exit 0
fi
export npm_config_cache="$cache/npm"
# --prefer-offline: packages in npm's cache are not checked against the registry again.
npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
echo "$want" >"$stamp"
keep
