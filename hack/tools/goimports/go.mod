// Module goimports pins goimports, which `make fmt-check` runs to enforce import grouping. Kept apart from the
// plugin's module so golang.org/x/tools stays out of its graph.
module github.com/harvester/docker-machine-driver-harvester/hack/tools/goimports

go 1.26.0

tool golang.org/x/tools/cmd/goimports

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
	golang.org/x/tools v0.52.0 // indirect
)
