#!/usr/bin/env bash
# The UI extension's tests: Jest (ui/test/unit) after installing their dependencies (deps.sh).
set -euo pipefail
ui="$(cd "$(dirname "$0")/.." && pwd)"
"$ui/scripts/deps.sh"
cd "$ui/test"
node_modules/.bin/jest --ci "$@"
