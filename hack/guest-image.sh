#!/usr/bin/env bash
# guest-image.sh builds the small Linux guest the e2e real-guest mode boots, and prints the directory holding it:
#
#   vmlinuz, initrd.img   the guest's kernel and initramfs (booted directly by qemu, no boot loader)
#   rootfs.qcow2          an ext4 root file system, used read-only as the backing file of one overlay per VM
#
# The guest is Debian bookworm from Debian's packages (debootstrap), with a kernel, systemd (and dbus, so logind
# powers the guest off on an ACPI power-button press, which is how a graceful stop reaches it), cloud-init limited to
# the NoCloud datasource, openssh-server, and qemu-guest-agent installed but NOT started by anything: Debian starts
# the agent from a udev rule as soon as the org.qemu.guest_agent.0 port appears, and that rule is overridden here,
# so the agent runs only when the driver's cloud-init enables it. The guest needs no network of its own: its apt
# sources are empty, so cloud-init's package step finds the agent already installed and moves on.
#
# The cache key is a hash of the recipe (the build function, suite, mirror, packages): changing it rebuilds,
# nothing else does (comments included). Override the cache root with DMDH_CACHE. Host packages (debootstrap,
# qemu, genisoimage) are installed from Debian when missing; building needs root (debootstrap's chroot).
# Concurrent runs take a lock: one builds, the others wait.
#
#   hack/guest-image.sh           build if needed, print the directory
#   hack/guest-image.sh --check   exit 0 when the tooling to build and boot guests is present or installable
set -euo pipefail

cache_root=${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}
suite=bookworm
mirror=${DMDH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(linux-image-cloud-amd64 systemd-sysv udev dbus cloud-init openssh-server qemu-guest-agent locales ifupdown isc-dhcp-client iproute2 netbase tzdata sudo)
host_packages=(debootstrap qemu-system-x86 qemu-utils genisoimage e2fsprogs)

log() { echo "guest-image.sh: $*" >&2; }

host_tools() { # install the host packages that are missing (Debian only)
	local missing=() p
	for p in "${host_packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		log "missing host packages: ${missing[*]} (install them, or run as root on Debian)"
		return 1
	fi
	log "installing ${missing[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

if [ "${1:-}" = --check ]; then
	[ "$(uname -m)" = x86_64 ] || { log "guests are x86_64; this host is $(uname -m)"; exit 1; }
	[ "$(id -u)" = 0 ] || { log "building the guest image needs root (debootstrap, chroot)"; exit 1; }
	host_tools
	exit 0
fi

build() { # build <out dir>
	local out=$1 tmp root
	tmp=$(mktemp -d "$cache_root/.guest.XXXXXX")
	root=$tmp/root
	# The temporary root goes on return and on a signal too: a run stopped mid-build (Ctrl-C, a killed test)
	# must not leave the chroot's /proc mounted in the cache. umount may fail (debootstrap unmounted it, or it
	# is not mounted yet) and must not stop the cleanup under set -e; -l detaches it while a process still uses it.
	trap 'umount -l "$root/proc" 2>/dev/null || :; rm -rf --one-file-system "$tmp"' RETURN
	trap 'umount -l "$root/proc" 2>/dev/null || :; rm -rf --one-file-system "$tmp"; exit 143' TERM INT HUP
	log "debootstrap $suite into a temporary root (about two minutes, once per recipe)"
	# debootstrap resolves --include poorly (cloud-init's python3 dependencies fail to configure in its base
	# pass), so it lays down minbase only and apt installs the rest inside the chroot.
	debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$tmp/build.log" 2>&1 ||
		{ tail -20 "$tmp/build.log" >&2; return 1; }
	# Some maintainer scripts look at /proc; where mounting is not allowed they manage without it.
	mount -t proc proc "$root/proc" 2>/dev/null || log "cannot mount /proc in the chroot; installing without it"
	local rc=0
	chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" \
		>>"$tmp/build.log" 2>&1 || rc=$?
	! mountpoint -q "$root/proc" || umount "$root/proc"
	[ $rc -eq 0 ] || { tail -20 "$tmp/build.log" >&2; return 1; }

	# Offline guest: no apt sources, so cloud-init's "packages" step is a local no-op for installed packages.
	: >"$root/etc/apt/sources.list"
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb

	# The agent must not start by itself, and must stay on once enabled. Debian's unit is static, started by a
	# udev rule as soon as the port appears: the override rule (same file name in /etc wins) keeps the rule's
	# systemd tag (the unit BindsTo the port's device) and drops the start, and the unit copy in /etc gains an
	# [Install] section, so `systemctl enable --now qemu-guest-agent` from cloud-init starts it now and on every
	# later boot, as on an image where it is enabled.
	printf '%s\n' 'SUBSYSTEM=="virtio-ports", ATTR{name}=="org.qemu.guest_agent.0", TAG+="systemd"' \
		>"$root/etc/udev/rules.d/60-qemu-guest-agent.rules"
	sed 's/^\[Install\]$/[Install]\nWantedBy=multi-user.target/' "$root/lib/systemd/system/qemu-guest-agent.service" \
		>"$root/etc/systemd/system/qemu-guest-agent.service"
	grep -q '^WantedBy=multi-user.target' "$root/etc/systemd/system/qemu-guest-agent.service"
	rm -f "$root"/etc/systemd/system/*.wants/qemu-guest-agent.service
	# cloud-init's locale module sets en_US.UTF-8, as on Debian's cloud images, where it is generated.
	printf 'en_US.UTF-8 UTF-8\n' >"$root/etc/locale.gen"
	chroot "$root" locale-gen >>"$tmp/build.log" 2>&1
	# cloud-init: NoCloud only (the seed ISO labelled cidata), no waiting for metadata services that cannot exist.
	printf 'datasource_list: [ NoCloud, None ]\n' >"$root/etc/cloud/cloud.cfg.d/90-dmdh-nocloud.cfg"

	# Root on the first virtio disk; serial console for the boot log; machine-id regenerated per guest.
	printf '/dev/vda / ext4 defaults 0 1\n' >"$root/etc/fstab"
	: >"$root/etc/machine-id"
	rm -f "$root/var/lib/dbus/machine-id"
	printf 'localhost\n' >"$root/etc/hostname"
	# Host keys are made per guest by cloud-init's ssh module (ssh_deletekeys), not shared from the image.
	rm -f "$root"/etc/ssh/ssh_host_*

	cp -L "$root/vmlinuz" "$tmp/vmlinuz"
	cp -L "$root/initrd.img" "$tmp/initrd.img"
	chmod 0644 "$tmp/vmlinuz" "$tmp/initrd.img"
	# mkfs.ext4 -d fills the file system from the directory: no loop device, no mount.
	mkfs.ext4 -q -F -L rootfs -d "$root" "$tmp/rootfs.raw" 2G >&2
	qemu-img convert -O qcow2 "$tmp/rootfs.raw" "$tmp/rootfs.qcow2"
	rm -rf "$root" "$tmp/rootfs.raw" "$tmp/build.log"
	rm -rf "$out"
	mv "$tmp" "$out"
	trap - RETURN TERM INT HUP
}

complete() { [ -s "$1/vmlinuz" ] && [ -s "$1/initrd.img" ] && [ -s "$1/rootfs.qcow2" ]; }

# The recipe: what build runs (declare -f prints it without comments) and what it installs.
key=$({ declare -f build; printf '%s\n' "$suite" "$mirror" "${packages[@]}"; } | sha256sum | cut -c1-16)
out=$cache_root/guest-$key
if ! complete "$out"; then
	host_tools
	mkdir -p "$cache_root"
	exec 9>"$cache_root/.lock-guest"
	flock 9
	complete "$out" || build "$out"
	# Images of older recipes are not booted again: drop them (each is a few hundred MB).
	find "$cache_root" -maxdepth 1 -name 'guest-*' ! -path "$out" -exec rm -rf {} +
	exec 9>&-
fi
echo "$out"
