#!/usr/bin/env bash
# tools.sh builds the real programs the test bed runs, from the Go module proxy, into a cache outside the
# work tree, and prints the directory that holds them. A second run with the same recipe is a no-op.
#
#   hack/tools.sh controlplane     -> etcd, kube-apiserver, kube-controller-manager
#   hack/tools.sh rancher-machine  -> rancher-machine
#   hack/tools.sh goreleaser       -> goreleaser (make release-snapshot)
#   hack/tools.sh goimports        -> goimports (make fmt-check)
#   hack/tools.sh kubevirt         -> kubevirt: KubeVirt's CRDs and VirtualMachine admission for the test bed
#   hack/tools.sh harvester        -> harvester: Harvester's VirtualMachine validator and mutator for the test bed
#   hack/tools.sh helm             -> helm (the release test lints and renders the chart the release packages)
#
# The cache key is a hash of the wrapper module (go.mod, go.sum, and its own Go files and nested modules where
# it has any, and the modules its go.mod replaces with a directory beside it: hack/tools/internal/serve, which the
# webhook tools share) and of the build recipe (packages, ldflags), so changing a pinned version or the wrapper's
# code rebuilds and nothing else does. Override the cache root with DMDH_CACHE.
# Concurrent runs (parallel test packages) take a lock: one builds, the others wait and reuse the result.
#
#   hack/tools.sh --if-built <name> prints the directory only when the tool is built, and otherwise says so and
#   exits 1 without building: the unit tests use it (internal/testenv), so none waits minutes for a build inside
#   go test's own time limit. `make quick` and `make deps` build the tools first.
set -euo pipefail

if_built=false
if [ "${1:-}" = --if-built ]; then
	if_built=true
	shift
fi

here=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${DMDH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docker-machine-driver-harvester}
export CGO_ENABLED=0

# The server version stamped into kube-apiserver and kube-controller-manager; without it they report v0.0.0,
# which clients and discovery dislike. Keep it equal to the k8s.io/kubernetes version in the wrapper's go.mod.
k8s_ldflags="-X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"

# What helm's own Makefile stamps: its version (else it reports v3.18) and the Kubernetes version its lint and
# template assume (else 1.20), the minor of the k8s.io/client-go it is built with. Keep both equal to the wrapper's
# go.mod (helm.sh/helm/v3, k8s.io/client-go).
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=v3.18.6 -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
	helm_ldflags="$helm_ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=33"
done

build() { # build <wrapper dir> <out dir> <ldflags> <package=binary>...
	local src=$1 out=$2 ldflags=$3
	shift 3
	local tmp
	tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
	(
		cd "$src"
		for spec in "$@"; do
			local pkg=${spec%%=*} bin=${spec##*=}
			echo "tools.sh: building $bin ($pkg); a first build takes minutes" >&2
			local start=$SECONDS rc=0
			heartbeat "$bin" >/dev/null &
			local beat=$!
			go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/$bin" "$pkg" || rc=$?
			kill "$beat" 2>/dev/null || true
			wait "$beat" 2>/dev/null || true
			[ "$rc" = 0 ] || { echo "tools.sh: building $bin failed (exit $rc)" >&2; exit "$rc"; }
			echo "tools.sh: built $bin in $((SECONDS - start)) s" >&2
		done
	) || { rm -rf "$tmp"; return 1; }
	rm -rf "$out"
	mv "$tmp" "$out"
}

heartbeat() { # heartbeat <binary>: a progress line every 30 s while go build, which prints nothing, runs
	local start=$SECONDS nap
	# Killed with TERM when the build ends: take the sleep along, or it would hold the caller's pipes open.
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 30 >/dev/null &
		nap=$!
		wait "$nap"
		echo "tools.sh: still building $1 ($((SECONDS - start)) s so far)" >&2
	done
}

ensure() { # ensure <name> <wrapper dir> <ldflags> <package=binary>...: print the cache dir, building it if needed
	local name=$1 src=$2 ldflags=$3
	shift 3
	local key out
	key=$({ cat "$src/go.mod" "$src/go.sum"; sources "$src"; shared "$src"; printf '%s\n' "$ldflags" "$@"; } | sha256sum | cut -c1-16)
	out=$cache_root/$name-$key
	if ! complete "$out" "$@" && $if_built; then
		echo "tools.sh: $name is not built (run hack/tools.sh $name; a first build takes minutes)" >&2
		exit 1
	fi
	if ! complete "$out" "$@"; then
		mkdir -p "$cache_root"
		exec 9>"$cache_root/.lock-$name"
		flock 9
		# Another run may have finished the build while this one waited for the lock.
		complete "$out" "$@" || build "$src" "$out" "$ldflags" "$@"
		exec 9>&-
	fi
	echo "$out"
}

sources() { # sources <wrapper dir>: the wrapper's own Go files and nested go.mod files, names and contents
	local f
	(cd "$1" && find . \( -name '*.go' -o -path './*/*' -name go.mod \) -type f | LC_ALL=C sort) | while read -r f; do
		printf '%s\n' "$f"
		cat "$1/$f"
	done
}

shared() { # shared <wrapper dir>: the sources of the modules its go.mod replaces with a directory outside it (=> ../…)
	local dir
	sed -n 's|.*=> *\(\.\./[^ ]*\).*|\1|p' "$1/go.mod" | LC_ALL=C sort -u | while read -r dir; do
		printf 'shared %s\n' "$dir"
		cat "$1/$dir/go.mod"
		sources "$1/$dir"
	done
}

complete() { # complete <dir> <package=binary>...: every binary is present
	local dir=$1 spec
	shift
	for spec in "$@"; do
		[ -x "$dir/${spec##*=}" ] || return 1
	done
}

case "${1:-}" in
controlplane)
	ensure controlplane "$here/hack/tools/controlplane" "$k8s_ldflags" \
		go.etcd.io/etcd/server/v3=etcd \
		k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager
	;;
rancher-machine)
	ensure rancher-machine "$here/hack/tools/rancher-machine" "" \
		github.com/rancher/machine/cmd/rancher-machine=rancher-machine
	;;
guest-image)
	# not a Go build: the Debian guest the real-guest e2e mode boots (see the script)
	$if_built && { echo "tools.sh: --if-built does not apply to guest-image (hack/guest-image.sh --check)" >&2; exit 2; }
	exec "$here/hack/guest-image.sh"
	;;
goreleaser)
	ensure goreleaser "$here/hack/tools/goreleaser" "" \
		github.com/goreleaser/goreleaser/v2=goreleaser
	;;
goimports)
	ensure goimports "$here/hack/tools/goimports" "" \
		golang.org/x/tools/cmd/goimports=goimports
	;;
kubevirt)
	ensure kubevirt "$here/hack/tools/kubevirt" "" .=kubevirt
	;;
harvester)
	ensure harvester "$here/hack/tools/harvester" "" .=harvester
	;;
helm)
	ensure helm "$here/hack/tools/helm" "$helm_ldflags" helm.sh/helm/v3/cmd/helm=helm
	;;
*)
	echo "usage: $0 [--if-built] controlplane|rancher-machine|goreleaser|goimports|kubevirt|harvester|helm|guest-image" >&2
	exit 2
	;;
esac
