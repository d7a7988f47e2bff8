// The UI extension is not Go. This file makes ui/ a module of its own, so that the main module's ./... patterns
// (go vet, go test) leave out ui/ and the Go sources that npm packages carry in ui/node_modules.
module github.com/harvester/docker-machine-driver-harvester/ui

go 1.26
