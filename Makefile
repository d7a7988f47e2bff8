# docker-machine-driver-harvester — build, test and demo entry points. `make help` lists them.

GO        ?= go
PKG       := github.com/harvester/docker-machine-driver-harvester
BIN       := bin/docker-machine-driver-harvester
# The release's one version (internal/release): ui/pkg/hcivm/package.json "version", which is also the chart's
# version and appVersion, the extension's, and for a release the tag without its v (hack/helm-chart.sh says why).
RELEASE_VERSION := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' ui/pkg/hcivm/package.json)
# The driver's --version: the release's tag when the checkout is at it, else the release's version marked -dev
# (git describe would name the existing driver's newest tag in the repository the release is published in).
VERSION   ?= $(shell git describe --tags --exact-match --match 'v$(RELEASE_VERSION)' 2>/dev/null || echo v$(RELEASE_VERSION)-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT) -X $(PKG)/internal/version.Date=$(DATE)
# The race detector needs cgo; the shipped binary is static. Tests and vet share one cgo build cache.
TESTENV   := CGO_ENABLED=1
TESTFLAGS ?= -race -timeout 80m

.PHONY: help demo build test bench deps fmt-check vet unit ui-test ui-flags ui-extension helm-chart release-tag-check e2e-guest size release-snapshot nodedriver-manifests rancher-image clean prereqs-quick prereqs-demo prereqs-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# The first thing make quick, make demo and make test do: name what the machine lacks, and the command that
# installs it (or install it with apt-get, as root on Debian). The README's "Try it without a Harvester" lists it.
prereqs-quick prereqs-demo prereqs-test: prereqs-%:
	@hack/prereqs.sh $*

demo: prereqs-demo build ## run the driver's main job: a simulated Harvester on this machine, one machine created and removed by the real rancher-machine (REAL_GUEST=1: booted as a real guest under qemu)
	CGO_ENABLED=0 $(GO) run ./e2e/cmd/demo -plugin $(BIN) $(if $(REAL_GUEST),-real-guest)

build: ## build the static plugin binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/docker-machine-driver-harvester

test: prereqs-test fmt-check vet deps unit ui-test ## everything CI runs: gofmt and import-grouping check, go vet, all tests with the race detector, the UI extension's tests

deps: ## install and build what the tests run (cloud-init, qemu from Debian; etcd, kube-apiserver, rancher-machine, goreleaser, helm, KubeVirt's CRDs and admission, Harvester's VM validator and mutator from the Go module proxy; the UI tests' Node modules from npm; the UI extension's archive the release test reads; the Debian guest image where it can be built); idempotent and cached
	cloudinit/testdata/install-cloud-init.sh
	hack/tools.sh controlplane >/dev/null
	hack/tools.sh kubevirt >/dev/null
	hack/tools.sh harvester >/dev/null
	hack/tools.sh rancher-machine >/dev/null
	hack/tools.sh goreleaser >/dev/null
	hack/tools.sh helm >/dev/null
	ui/scripts/deps.sh
	ui/scripts/build-extension.sh >/dev/null
	@if hack/guest-image.sh --check; then hack/guest-image.sh >/dev/null; \
	else echo "deps: no guest tooling here (needs root, Debian, x86_64): the real-guest tests will be skipped"; fi

fmt-check: ## fail when a Go file is not gofmt-formatted or its imports are not grouped standard, third-party, this module (goimports, built by hack/tools.sh)
	@files=$$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'); \
	out=$$(gofmt -l $$files); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi; \
	goimports=$$(hack/tools.sh goimports)/goimports || exit 1; \
	out=$$($$goimports -local $(PKG) -l $$files); \
	if [ -n "$$out" ]; then echo "goimports would change (run it with -local $(PKG) -w):"; echo "$$out"; exit 1; fi

vet: ## go vet
	$(TESTENV) $(GO) vet ./...

# The product's packages: everything but e2e/ (a control plane, rancher-machine, real guests) and ui/. The ones
# that run the real cloud-init or KubeVirt's and Harvester's admission are named first, as in unit.
QUICK_PKGS := ./cloudinit ./cloudinit/networkconfig ./harvester ./harvester/objects ./cmd/... ./cloudinit/... ./harvester/... ./internal/... ./userdata/... ./hack/...
QUICKFLAGS ?=

.PHONY: quick quick-tools admission-tools
quick: prereqs-quick fmt-check vet quick-tools ## the loop before a commit (docs/development.md): gofmt and import grouping, go vet, cloud-init from Debian, the product packages' tests without the race detector (not e2e/, not ui/); QUICKFLAGS=-count=1 reruns what go test has cached
	$(TESTENV) $(GO) test $(QUICKFLAGS) $(QUICK_PKGS)

# The tests never build a tool (a first build takes minutes, past go test's 10-minute default). quick installs
# cloud-init where it can (root, apt-get), and runs harvester/objects' admission tests only once their tools are
# built: the kubevirt tool alone took 1,165 s on a fresh machine, longer than the rest of a first make quick.
quick-tools: ## what make quick's tests run: cloud-init from Debian as root; says whether the admission tools (make admission-tools) are built
	@if command -v cloud-init >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then cloudinit/testdata/install-cloud-init.sh; \
	else echo "quick: no cloud-init here and no root to install it (cloudinit/testdata/install-cloud-init.sh): the tests that run it are skipped"; fi
	@if ! hack/tools.sh --if-built kubevirt >/dev/null 2>&1 || ! hack/tools.sh --if-built harvester >/dev/null 2>&1; then \
	echo "quick: KubeVirt's and Harvester's admission tools are not built, so harvester/objects' tests that pass the golden VMs through them are skipped; make admission-tools builds them once (7 to 20 minutes on 2 cores; make deps does too), and make quick runs those tests from then on"; fi

admission-tools: ## build KubeVirt's and Harvester's admission (hack/tools.sh kubevirt and harvester: 7 to 20 minutes the first time on 2 cores), which harvester/objects' tests pass the golden VMs through; cached
	hack/tools.sh kubevirt >/dev/null
	hack/tools.sh harvester >/dev/null

# The two slowest packages are named first: go test starts packages in the order given (cmd/go gives earlier
# packages' actions a higher priority), so the longest one does not start last and hold the run at the end. (The
# real-guest scenarios run after the rest of e2e/scenarios, being parallel; run beside it in a go test of their
# own, they only shared the 2 cores the run already fills, and the run was no faster.)
unit: ## go test -race ./... (tools the tests need must be present: DMDH_REQUIRE_TOOLS=1)
	DMDH_REQUIRE_TOOLS=1 $(TESTENV) $(GO) test $(TESTFLAGS) ./e2e/scenarios ./e2e/guest ./...

ui-test: ## the UI extension's tests, as `cd ui && npm test` runs them (ui/scripts/test.sh: Jest with the installed @rancher/shell, then the built extension with Rancher's styles in headless Chromium); installs Debian's chromium and the Node modules from npm first (ui/scripts/deps.sh, cached)
	ui/scripts/test.sh

ui-flags: ## rewrite ui/pkg/hcivm/flags.json, the flag table the UI extension is built from
	$(GO) run ./cmd/docker-machine-driver-harvester flags --json --driver hcivm > ui/pkg/hcivm/flags.json

# CHART_VERSION names the chart's file: goreleaser's version of the release (the tag without its v, or
# <version>-snapshot); the chart inside has the release's version.
CHART_VERSION ?= $(RELEASE_VERSION)
# The release's checksum file the chart's NodeDriver checksums come from, and the chart package written; goreleaser
# sets both, and VERSION, CHART_VERSION and SNAPSHOT, when it runs this target (.goreleaser.yaml, signs).
CHECKSUMS     ?= dist/sha256sums.txt
CHART         ?= dist/hcivm-$(CHART_VERSION).tgz

ui-extension: ## build the UI extension with @rancher/shell's toolchain (ui/package.json and its lock, Node modules from npm), check the build in headless Chromium and pack ui/dist/hcivm-ui-<version>.tgz, the archive the chart's UIPlugin loads (ui/scripts/build-extension.sh; cached by its inputs, so a second run is a copy)
	@ui/scripts/build-extension.sh

helm-chart: ## package the Helm chart of the second name (package/helm/hcivm: the NodeDriver for the release's archives, from CHECKSUMS, and the UIPlugin) into dist/hcivm-<version>.tgz (VERSION=the release tag); make release-snapshot runs it through goreleaser
	@hack/helm-chart.sh $(if $(filter true,$(SNAPSHOT)),--snapshot) "$(CHECKSUMS)" "$(VERSION)" "$(RELEASE_VERSION)" "$(CHART)"

release-tag-check: ## refuse a release tag (VERSION) that is not v<the release's version, ui/pkg/hcivm/package.json>, or a version not above the existing driver's v1.0.6; with SNAPSHOT=true only the version; goreleaser runs it before building
	@if [ "$(SNAPSHOT)" = true ]; then hack/helm-chart.sh --check-version "$(RELEASE_VERSION)"; \
	else hack/helm-chart.sh --check-tag "$(VERSION)" "$(RELEASE_VERSION)"; fi

e2e-guest: ## only the real-guest tests: the driver's VMs booted under qemu with real cloud-init and qemu-guest-agent
	hack/guest-image.sh >/dev/null
	DMDH_REQUIRE_TOOLS=1 $(TESTENV) $(GO) test $(TESTFLAGS) -count=1 -v -run 'RealGuests|TestBoot' ./e2e/guest ./e2e/scenarios

size: build ## print the size of the stripped plugin binary (budget: 30 MB)
	@bytes=$$(stat -c %s $(BIN)); echo "$(BIN): $$bytes bytes ($$(awk "BEGIN{printf \"%.1f\", $$bytes/1000000}") MB; budget 30 MB)"; \
	[ $$bytes -le 30000000 ] || { echo "over the 30 MB budget"; exit 1; }

bench: build ## measure the driver on the simulated Harvester (ready detection, API requests, a lifecycle with a 3 s boot, the pre-flight — also a reference driver's with REFERENCE_PLUGIN=path —, plugin start, 100 and then 200 machines at once: their create and remove times (p50, p95), API requests per machine beside one machine's, the load meanwhile) and print a table; then the time and memory (the parser's allocations, the plugin's peak RSS) spent refusing the worst input of each kind
	CGO_ENABLED=0 $(GO) run ./e2e/cmd/bench -plugin $(BIN) $(if $(REFERENCE_PLUGIN),-reference-plugin $(REFERENCE_PLUGIN))
	$(GO) test -run '^$$' -bench HostileInput -benchmem -benchtime 5x ./harvester/config ./cmd/docker-machine-driver-harvester

release-snapshot: ## build the release into dist/ with goreleaser (built by hack/tools.sh) as the tag v<the release's version> would, versioned <version>-snapshot, without publishing: the archives and their checksums, the UI extension's archive (make ui-extension, cached) and the Helm chart (make helm-chart); print the checksums
	@goreleaser=$$(hack/tools.sh goreleaser)/goreleaser && GOFLAGS=-buildvcs=false DMDH_RELEASE_VERSION=$(RELEASE_VERSION) $$goreleaser release --snapshot --clean --skip=publish
	@cat dist/sha256sums.txt
	@ls dist/hcivm-*.tgz

nodedriver-manifests: ## write dist/nodedriver-hcivm-<arch>.yaml, the NodeDriver that installs the second driver name on a stock Rancher, with the checksums of dist/sha256sums.txt, the published release's (download it first; VERSION=the release tag the archives are published under)
	$(GO) run ./hack/nodedriver -version $(VERSION) -checksums dist/sha256sums.txt -out dist

# Rancher's image with this driver in place of its built-in Harvester driver (package/rancher/Dockerfile).
RANCHER_VERSION ?=
RANCHER_IMAGE   ?= rancher/rancher:$(RANCHER_VERSION)-harvester-$(VERSION)
PLATFORMS       ?= linux/$(shell $(GO) env GOARCH)
comma := ,

rancher-image: ## build Rancher's image with this driver as its built-in harvester driver: RANCHER_VERSION=v2.x.y (the Rancher you run), RANCHER_IMAGE=registry/name:tag, PLATFORMS=linux/amd64,linux/arm64 with PUSH=1; prints the docker command and needs a Docker engine with buildx
	@[ -n "$(RANCHER_VERSION)" ] || { echo "rancher-image: set RANCHER_VERSION to the Rancher version you run, e.g. make rancher-image RANCHER_VERSION=v2.13.1"; exit 2; }
	@mkdir -p dist/rancher-image
	@for arch in $(notdir $(subst $(comma), ,$(PLATFORMS))); do \
		echo "building dist/rancher-image/docker-machine-driver-harvester-$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o dist/rancher-image/docker-machine-driver-harvester-$$arch ./cmd/docker-machine-driver-harvester || exit 1; \
	done
	@cmd="docker buildx build --platform $(PLATFORMS) --build-arg RANCHER_VERSION=$(RANCHER_VERSION) -f package/rancher/Dockerfile -t $(RANCHER_IMAGE) $(if $(PUSH),--push,--load) dist/rancher-image"; \
	echo "$$cmd"; \
	if ! docker info >/dev/null 2>&1; then \
		echo "rancher-image: no Docker engine here (docker info failed); the binaries are in dist/rancher-image: run the command above where Docker with buildx runs"; exit 1; \
	fi; \
	$$cmd

clean: ## remove build output
	rm -rf bin dist
