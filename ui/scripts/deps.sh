#!/usr/bin/env bash
# Installs the UI extension's Node modules (ui/package-lock.json: @rancher/shell and its build toolchain, Jest,
# playwright-core, esbuild) from the npm registry into ui/node_modules, with no package's install script
# (ui/.npmrc); npm's download cache is ~/.cache/docker-machine-driver-harvester/npm. Idempotent: nothing happens
# while node_modules matches the lock file (installed by this script, or by `npm ci` since the lock last changed).
# No browser is downloaded (the browser check uses Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "ui deps: npm is missing (Node.js 20 or later)" >&2; exit 1; }
stamp=node_modules/.dmdh-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi
# npm writes node_modules/.package-lock.json at the end of an install.
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] && [ node_modules/.package-lock.json -nt package.json ]; then
	echo "$want" >"$stamp"
	exit 0
fi
export npm_config_cache="${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}/npm"
# --prefer-offline: packages in npm's cache are not checked against the registry again.
npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
echo "$want" >"$stamp"
