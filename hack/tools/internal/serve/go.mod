// Module serve is what the test bed's webhook tools (hack/tools/kubevirt, hack/tools/harvester) share to serve
// their admission over HTTPS: the standard library only. Each tool requires it through a replace of its path to
// this directory; hack/tools.sh hashes it into their cache keys.
module github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve

go 1.26.0
