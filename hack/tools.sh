#!/usr/bin/env bash
# tools.sh builds the real programs the test bed runs, from the Go module proxy, into a cache outside the
# work tree, and prints the directory that holds them. A second run with the same recipe is a no-op.
#
#   hack/tools.sh controlplane     -> etcd, kube-apiserver, kube-controller-manager
#   hack/tools.sh rancher-machine  -> rancher-machine
#
# The cache key is a hash of the wrapper module (go.mod, go.sum) and of this script, so changing a pinned
# version rebuilds and nothing else does. Override the cache root with DMDH_CACHE.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}
export CGO_ENABLED=0

build() { # build <wrapper dir> <out dir> <package=binary>...
	local src=$1 out=$2
	shift 2
	local tmp
	tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
	(
		cd "$src"
		for spec in "$@"; do
			local pkg=${spec%%=*} bin=${spec##*=}
			echo "tools.sh: building $bin ($pkg)" >&2
			go build -trimpath -ldflags "-s -w ${LDFLAGS:-}" -o "$tmp/$bin" "$pkg"
		done
	)
	mkdir -p "$(dirname "$out")"
	rm -rf "$out"
	mv "$tmp" "$out"
}

key() { # key <wrapper dir>: the recipe's hash
	cat "$1/go.mod" "$1/go.sum" "$0" | sha256sum | cut -c1-16
}

case "${1:-}" in
controlplane)
	src=$here/e2e/tools/controlplane
	out=$cache_root/controlplane-$(key "$src")
	if [ ! -x "$out/kube-apiserver" ] || [ ! -x "$out/etcd" ] || [ ! -x "$out/kube-controller-manager" ]; then
		mkdir -p "$cache_root"
		# Without these the servers report version v0.0.0, which clients and discovery dislike.
		LDFLAGS="-X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36" \
			build "$src" "$out" \
			go.etcd.io/etcd/server/v3=etcd \
			k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver \
			k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager
	fi
	echo "$out"
	;;
rancher-machine)
	src=$here/e2e/tools/rancher-machine
	out=$cache_root/rancher-machine-$(key "$src")
	if [ ! -x "$out/rancher-machine" ]; then
		mkdir -p "$cache_root"
		build "$src" "$out" github.com/rancher/machine/cmd/rancher-machine=rancher-machine
	fi
	echo "$out"
	;;
*)
	echo "usage: $0 controlplane|rancher-machine" >&2
	exit 2
	;;
esac
