#!/usr/bin/env bash
# Installs what the UI extension's tests need (ui/test/package-lock.json) from the npm registry into
# ui/test/node_modules; npm's download cache is ~/.cache/docker-machine-driver-harvester/npm. Idempotent: nothing
# happens while node_modules matches the lock file. No browser is downloaded (the browser check uses Debian's
# chromium).
set -euo pipefail
cd "$(dirname "$0")/../test"
command -v npm >/dev/null || { echo "ui deps: npm is missing (Node.js 20 or later)" >&2; exit 1; }
stamp=node_modules/.dmdh-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi
export npm_config_cache="${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester/npm"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
echo "$want" >"$stamp"
