// Package rancher shows on a real API server what Rancher does with this driver's flags: it installs the
// HarvesterConfig CustomResourceDefinition Rancher would make of them (internal/rancher, written from
// rancher/rancher's own functions), stores HarvesterConfigs in it and builds their command lines by Rancher's
// rules. Its tests need etcd and kube-apiserver (hack/tools.sh controlplane); it has no other code.
package rancher
