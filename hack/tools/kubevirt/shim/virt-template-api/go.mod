// A stand-in for kubevirt.io/virt-template-api, which the Go module proxy does not serve: see ../README.md.
module kubevirt.io/virt-template-api

go 1.26.0

require k8s.io/apimachinery v0.34.2
