#!/usr/bin/env bash
# prereqs.sh checks what `make quick`, `make demo` and `make test` need of the machine before they start, and
# names each missing prerequisite with the command that installs it. As root on a Debian-family system it installs
# what Debian's apt-get can (a C compiler; Node.js when the candidate is 20 or later) instead of naming it.
#
#   hack/prereqs.sh quick|demo|test
#
# Exit 0 when everything is there (a line on stderr for what the run will skip or cost), 1 when something is
# missing, 2 for a wrong argument. The prerequisites are those of the README's "Try it without a Harvester":
# keep the two in step. DMDH_OS_RELEASE and DMDH_MEMINFO name other files than /etc/os-release and /proc/meminfo
# (hack/prereqs's tests use them).
set -euo pipefail

target=${1:-}
case "$target" in
quick | demo | test) ;;
*)
	echo "usage: $0 quick|demo|test" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")/.." && pwd)
os_release=${DMDH_OS_RELEASE:-/etc/os-release}
meminfo=${DMDH_MEMINFO:-/proc/meminfo}
cache_root=${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}

# What each target needs of memory and of free disk space for a first run (empty caches), in GiB: bounds with a
# margin over what was measured (docs/development.md, "What a fresh machine needs").
case "$target" in
quick) need_mem=2 need_disk=3 ;;
demo) need_mem=4 need_disk=10 ;;
test) need_mem=8 need_disk=16 ;;
esac

missing=()  # each: what is missing, and how to get it
notes=()    # what the run will skip, not a failure
miss() { missing+=("$1"); }
note() { notes+=("$1"); }

root=false
[ "$(id -u)" = 0 ] && root=true
has() { command -v "$1" >/dev/null 2>&1; }

# The system: Linux, and for make test a Debian-family one (its apt-get installs cloud-init, qemu, debootstrap
# and Chromium).
os_name="$(uname -s)"
distro="" family=""
if [ -r "$os_release" ]; then
	distro=$(. "$os_release" && echo "${PRETTY_NAME:-${ID:-unknown}}")
	family=$(. "$os_release" && echo " ${ID:-} ${ID_LIKE:-} ")
fi
debian=false
case "$family" in *" debian "* | *" ubuntu "*) debian=true ;; esac
$debian && ! has apt-get && debian=false
apt=false # apt-get can install here
$debian && $root && apt=true

# how_debian PACKAGE...: the command that installs Debian packages here.
how_debian() {
	if $apt; then
		echo "apt-get install -y $* failed: run it by hand and read its error"
	elif $debian; then
		echo "as root: apt-get install -y $*"
	else
		echo "install $* with this system's package manager"
	fi
}

if [ "$os_name" != Linux ] && [ "$target" != quick ]; then
	miss "Linux: this is $os_name; the simulated Harvester (etcd, kube-apiserver, KubeVirt's controllers) runs on Linux only: use a Linux machine or VM (Debian 12 is what CI runs)"
fi
if [ "$target" = test ] && [ "$os_name" = Linux ] && ! $debian; then
	miss "a Debian-family system: this is ${distro:-a system without $os_release}, and make test installs cloud-init, qemu, debootstrap and Chromium with apt-get: use Debian 12 (what CI runs) or a container of it (docker run -it -v \"\$PWD:/src\" -w /src debian:12)"
fi
if [ "$target" = test ] && $debian && ! $root; then
	miss "root: make test installs Debian packages (cloud-init, qemu, debootstrap, Chromium) with apt-get and builds the guest image with debootstrap: run it as root (sudo make test), or in a container"
fi

# hack/tools.sh's own commands (util-linux and coreutils: on every Debian).
has flock || miss "flock, which hack/tools.sh takes the tool cache's lock with: $(how_debian util-linux)"
has sha256sum || miss "sha256sum, which hack/tools.sh keys the tool cache with: $(how_debian coreutils)"

# Go, as go.mod asks. A Go of 1.21 or later downloads the toolchain go.mod names by itself (GOTOOLCHAIN=auto), so
# `go version` run here reports the one the build will use.
want_go=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$here/go.mod")
go_help="install Go $want_go from https://go.dev/dl/ (Debian's golang-go is older): curl -fsSL https://go.dev/dl/go$want_go.linux-$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/').tar.gz | tar -C /usr/local -xz, then export PATH=\"\$PATH:/usr/local/go/bin\""
if ! has go; then
	if [ -x /usr/local/go/bin/go ]; then
		miss "Go on PATH: it is in /usr/local/go/bin, which is not on PATH: export PATH=\"\$PATH:/usr/local/go/bin\""
	else
		miss "Go $want_go or later (no go on PATH): $go_help"
	fi
else
	have_go=$(cd "$here" && go version 2>/dev/null | sed -n 's/^go version go\([0-9][0-9.]*\).*/\1/p' || true)
	if [ -z "$have_go" ]; then
		miss "Go $want_go or later (go version fails here: $(cd "$here" && go version 2>&1 | head -n 1)): $go_help"
	elif [ "$(printf '%s\n%s\n' "$want_go" "$have_go" | sort -V | head -n 1)" != "$want_go" ]; then
		miss "Go $want_go or later (this is Go $have_go): $go_help"
	fi
fi

# A C compiler: go vet and the tests build with cgo (the race detector needs it); the demo's build does not.
if [ "$target" != demo ] && ! has gcc && ! has cc; then
	if $apt; then
		echo "prereqs: installing a C compiler for cgo (apt-get install gcc libc6-dev)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >&2 || true
	fi
	has gcc || has cc || miss "a C compiler (go vet and the tests build with cgo, CGO_ENABLED=1): $(how_debian gcc libc6-dev)"
fi

# Node.js 20 or later with npm: the UI extension's build and tests (make test's ui-test, ui/scripts/deps.sh).
if [ "$target" = test ]; then
	node_major() { node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p'; }
	if { ! has node || [ "$(node_major)" -lt 20 ] 2>/dev/null || ! has npm; } && $apt; then
		candidate=$(apt-cache policy nodejs 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9]*\)\..*/\1/p; s/^ *Candidate: *[0-9]*:\([0-9]*\)\..*/\1/p' | head -n 1)
		if [ -n "$candidate" ] && [ "$candidate" -ge 20 ]; then
			echo "prereqs: installing Node.js $candidate from Debian (apt-get install nodejs npm)" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs >&2 || true
			has npm || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2 || true
		fi
	fi
	node_help="install Node.js 20 or later from https://nodejs.org/en/download (Debian 12's nodejs is 18; Debian 13's is 20: apt-get install nodejs npm)"
	if ! has node; then
		miss "Node.js 20 or later with npm (no node on PATH), for the UI extension's build and tests: $node_help"
	elif [ "$(node_major)" -lt 20 ] 2>/dev/null || [ -z "$(node_major)" ]; then
		miss "Node.js 20 or later with npm (this is Node.js $(node --version 2>/dev/null)), for the UI extension's build and tests: $node_help"
	elif ! has npm; then
		miss "npm (Node.js $(node --version) has none on PATH), for the UI extension's Node modules: $(how_debian npm)"
	fi
fi

# Memory and free disk space for a first run.
if [ -r "$meminfo" ]; then
	mem_kib=$(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' "$meminfo")
	if [ -n "$mem_kib" ] && [ "$mem_kib" -lt $((need_mem * 1024 * 1024 - 512 * 1024)) ]; then
		miss "memory: make $target needs about $need_mem GiB, this machine has $((mem_kib / 1024)) MiB"
	fi
fi
dir=$cache_root
while [ ! -d "$dir" ]; do dir=$(dirname "$dir"); done
free_kib=$(df -Pk "$dir" 2>/dev/null | awk 'NR == 2 { print $4 }')
if [ -n "$free_kib" ] && [ ! -d "$cache_root" ] && [ "$free_kib" -lt $((need_disk * 1024 * 1024)) ]; then
	miss "disk space: a first make $target fills about $need_disk GiB (the Go module and build caches, $cache_root); $dir's file system has $((free_kib / 1024 / 1024)) GiB free"
fi

# What the run skips without root, named once here (the tests say it again).
if [ "$target" = quick ] && ! has cloud-init && ! $apt; then
	note "no cloud-init here and no apt-get as root to install it: the tests that run the real cloud-init will be skipped (cloudinit/testdata/install-cloud-init.sh installs it)"
fi

for n in "${notes[@]}"; do echo "prereqs: $n" >&2; done
if [ ${#missing[@]} -gt 0 ]; then
	if [ ${#missing[@]} = 1 ]; then
		echo "make $target needs what this machine lacks:" >&2
	else
		echo "make $target needs ${#missing[@]} things this machine lacks:" >&2
	fi
	for m in "${missing[@]}"; do echo "  - $m" >&2; done
	echo "(hack/prereqs.sh checks these; the README's \"Try it without a Harvester\" lists every prerequisite)" >&2
	exit 1
fi
