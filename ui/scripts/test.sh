#!/usr/bin/env bash
# The UI extension's tests (`npm test`, `make ui-test`): Jest (ui/test/unit: the forms mounted in the installed
# @rancher/shell), then the browser check (ui/test/browser: the built extension on a page with @rancher/shell's
# styles in Debian's Chromium), after installing what they need (deps.sh, install-chromium.sh) and building the
# extension (build-extension.sh, cached by its inputs). Arguments go to Jest.
set -euo pipefail
ui="$(cd "$(dirname "$0")/.." && pwd)"
"$ui/scripts/deps.sh"
"$ui/scripts/install-chromium.sh" >&2
cd "$ui"
node_modules/.bin/jest -c test/jest.config.js --ci "$@"
built=$("$ui/scripts/build-extension.sh" --dir)
node test/browser/bundle.mjs
node test/browser/run.mjs --built "$built"
