#!/usr/bin/env bash
# The UI extension's tests: Jest (ui/test/unit), then the browser check (ui/test/browser), after installing what
# they need (deps.sh, install-chromium.sh).
set -euo pipefail
ui="$(cd "$(dirname "$0")/.." && pwd)"
"$ui/scripts/deps.sh"
"$ui/scripts/install-chromium.sh" >&2
cd "$ui/test"
node_modules/.bin/jest --ci "$@"
# The browser check: the machine-config form bundled with esbuild (not @rancher/shell's webpack toolchain) on a
# page with a fake store, in Debian's Chromium.
node browser/bundle.mjs
node browser/run.mjs
