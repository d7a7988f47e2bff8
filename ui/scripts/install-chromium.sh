#!/bin/sh
# Installs Debian's Chromium for the UI extension's browser check (ui/test/browser). Idempotent: does nothing
# when /usr/bin/chromium (or $CHROMIUM) exists. Needs root (apt-get).
set -eu
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
