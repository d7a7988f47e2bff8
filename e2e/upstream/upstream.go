// Package upstream is the one place that knows where the simulated Harvester's upstream manifests and code come
// from: Harvester's CRDs and ClusterRoles from the github.com/harvester/harvester module, the
// NetworkAttachmentDefinition CRD from the module that publishes it, both at the versions the root go.mod
// selects and read from the Go module cache; KubeVirt's CRDs and admission from KubeVirt's own code, built by
// `hack/tools.sh kubevirt` (hack/tools/kubevirt, pinned to the kubevirt.io/kubevirt that matches kubevirt.io/api
// in go.mod); Harvester's VirtualMachine validator and mutator from Harvester's own code, built by
// `hack/tools.sh harvester` (hack/tools/harvester, pinned to the github.com/harvester/harvester of go.mod), and
// Harvester's KubeVirt resource from its chart's values (HarvesterKubeVirt), Kube-OVN's Subnet CRD from the
// github.com/kubeovn/kube-ovn module Harvester's go.mod requires. Nothing is copied into the repository. One thing the bed installs is not upstream: the CRDs of Harvester's pcidevices-controller add-on
// (crds.DeviceAddOn), which the device scenario installs and removes again; no go.mod here or in Harvester
// requires github.com/harvester/pcidevices, so no version of it is pinned.
package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// Module paths of the upstream sources; their versions are the root go.mod's.
const (
	HarvesterModule = "github.com/harvester/harvester"
	NADModule       = "github.com/k8snetworkplumbingwg/network-attachment-definition-client"
	KubeOVNModule   = "github.com/kubeovn/kube-ovn"
)

// Manifest is one upstream file the test bed installs.
type Manifest struct {
	Module string // module path; the version is the root go.mod's
	Path   string // file inside the module
	// ClusterRoles, when set, takes only the ClusterRoles of these names from the file (a Helm template, whose
	// other documents the test bed does not need); all must be there.
	ClusterRoles []string
	// CRDs, when set, takes only the CustomResourceDefinitions of these names from the file (a file of many);
	// all must be there.
	CRDs []string
}

// Manifests lists Harvester's own resources the driver relies on: the KeyPair, Setting and VirtualMachineImage
// CRDs of Harvester's CRD chart, the ClusterRoles its cloud provider and CSI driver credentials are bound to
// (harvester/harvester deploy/charts/harvester/templates/rbac.yaml), and the NetworkAttachmentDefinition CRD
// (Harvester installs Multus, which publishes it as artifacts/networks-crd.yaml).
var Manifests = []Manifest{
	{Module: HarvesterModule, Path: "deploy/charts/harvester-crd/templates/harvesterhci.io_keypairs.yaml"},
	{Module: HarvesterModule, Path: "deploy/charts/harvester-crd/templates/harvesterhci.io_settings.yaml"},
	{Module: HarvesterModule, Path: "deploy/charts/harvester-crd/templates/harvesterhci.io_virtualmachineimages.yaml"},
	{Module: HarvesterModule, Path: "deploy/charts/harvester/templates/rbac.yaml",
		ClusterRoles: []string{"harvesterhci.io:cloudprovider", "harvesterhci.io:csi-driver"}},
	{Module: NADModule, Path: "artifacts/networks-crd.yaml"},
	KubeOVNSubnetCRD,
}

// KubeOVNSubnetCRD is Kube-OVN's Subnet CRD (kubeovn.io/v1, cluster-scoped, with a status subresource): a
// Harvester whose kubeovn-operator add-on is on serves it (Harvester 1.6 and later; the add-on deploys Kube-OVN as
// the VM networks' secondary CNI), and an overlay VM network's addresses come from the Subnet whose spec.provider
// is the network's <name>.<namespace>.ovn (kube-ovn pkg/controller/pod.go getPodAttachmentNet). The module is the
// one github.com/harvester/harvester's go.mod requires (its webhooks read Subnets through it: v1.14.10 for
// Harvester v1.8.2 and v1.9.0-rc6 alike); the file is the CRD directory of its chart, plain YAML, whose Subnet
// CRD is its Helm template's (charts/kube-ovn/templates/kube-ovn-crd.yaml) but for indentation. Harvester 1.9
// deploys Kube-OVN v1.16 (harvester scripts/images/harvester-additional-images.txt); the fields the driver and the
// bed read (spec.provider, cidrBlock, gateway, excludeIps, protocol, enableDHCP; status.v4availableIPs,
// v6availableIPs and conditions) are the same in both.
var KubeOVNSubnetCRD = Manifest{Module: KubeOVNModule, Path: "charts/kube-ovn-v2/crds/kube-ovn-crd.yaml", CRDs: []string{"subnets.kubeovn.io"}}

// CAPIClusterCRD is Cluster API's Cluster CRD, at the sigs.k8s.io/cluster-api the root go.mod selects (through
// github.com/harvester/harvester): Rancher makes a Cluster of it for each provisioning cluster, which a machine's rm
// reads in Rancher's cluster to tell that the whole cluster is being deleted (harvester/clusterdelete.go). It serves
// v1beta1, as Rancher 2.12 to 2.14 do.
var CAPIClusterCRD = Manifest{Module: "sigs.k8s.io/cluster-api", Path: "config/crd/bases/cluster.x-k8s.io_clusters.yaml"}

// KubeVirtBinEnv names the environment variable that points at a directory holding the kubevirt tool. When it is
// unset, `hack/tools.sh kubevirt` provides (and if need be builds) it.
const KubeVirtBinEnv = "DMDH_KUBEVIRT_BIN"

// KubeVirtTool returns the path of the kubevirt tool (hack/tools/kubevirt): `crds` prints virt-operator's
// VirtualMachine and VirtualMachineInstance CRDs, `webhook` serves virt-api's VirtualMachine admission. A first
// run builds it (minutes); a deadline on ctx does not cut that short (see repo.ToolDir).
func KubeVirtTool(ctx context.Context) (string, error) { return tool(ctx, "kubevirt", KubeVirtBinEnv) }

// HarvesterBinEnv names the environment variable that points at a directory holding the harvester tool. When it
// is unset, `hack/tools.sh harvester` provides (and if need be builds) it.
const HarvesterBinEnv = "DMDH_HARVESTER_BIN"

// HarvesterTool returns the path of the harvester tool (hack/tools/harvester, pinned to the
// github.com/harvester/harvester of the root go.mod): `webhook` serves Harvester's VirtualMachine validator. A
// first run builds it (minutes); a deadline on ctx does not cut that short (see repo.ToolDir).
func HarvesterTool(ctx context.Context) (string, error) {
	return tool(ctx, "harvester", HarvesterBinEnv)
}

// tool returns the path of the binary of `hack/tools.sh <name>`, which is named like the target.
func tool(ctx context.Context, name, envVar string) (string, error) {
	dir, err := repo.ToolDir(ctx, name, envVar)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Load reads one manifest from its module in the Go module cache, downloading the module when missing.
func (m Manifest) Load(ctx context.Context) ([]*unstructured.Unstructured, error) {
	mod, err := repo.ModuleDir(ctx, m.Module)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(mod.Dir, m.Path)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", m.Path, mod, err)
	}
	if len(m.ClusterRoles) > 0 {
		if data, err = clusterRoles(data, m.ClusterRoles...); err != nil {
			return nil, fmt.Errorf("%s from %s: %w", m.Path, mod, err)
		}
	}
	objs, err := apply.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode %s from %s: %w", m.Path, mod, err)
	}
	if len(m.CRDs) > 0 {
		if objs, err = crdsNamed(objs, m.CRDs...); err != nil {
			return nil, fmt.Errorf("%s from %s: %w", m.Path, mod, err)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s from %s holds no object", m.Path, mod)
	}
	return objs, nil
}

// Load returns every upstream manifest the test bed installs: Manifests, then KubeVirtCRDs. A first run may
// download modules and build the kubevirt tool.
func Load(ctx context.Context) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, m := range Manifests {
		objs, err := m.Load(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	kv, err := KubeVirtCRDs(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, kv...), nil
}
