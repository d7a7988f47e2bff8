#!/bin/sh
# Installs the real cloud-init (Debian's package; 22.4 on bookworm) that the tests of package cloudinit check
# their output against. Idempotent: does nothing when cloud-init is already on PATH. Needs root (apt-get).
set -eu
if command -v cloud-init >/dev/null 2>&1; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends cloud-init
cloud-init --version
