package guestaccount

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// What a guest cluster's Harvester cloud provider (harvester/cloud-provider-harvester) and CSI driver
// (harvester/harvester-csi-driver) call on Harvester, and no more: the table "What the account may do" of docs/cloud-provider.md is
// generated from these grants (readme_test.go), a row a rule with its component and upstream caller. Harvester's own
// kubeconfig endpoint binds its ClusterRoles harvesterhci.io:cloudprovider in the namespace and
// harvesterhci.io:csi-driver cluster-wide (pkg/api/kubeconfig/generate_handler.go,
// deploy/charts/harvester/templates/rbac.yaml); the driver binds its own roles instead, which allow these calls in
// the guest cluster's VM namespace only.
var (
	// guestGrants go in a Role in the VM namespace, the namespace of the kubeconfig's context, which both the
	// cloud provider (pkg/cloud-controller-manager/ccm.go) and the CSI driver (pkg/csi/manager.go) act in.
	guestGrants = []grant{
		// CCM pkg/cloud-controller-manager/loadbalancer.go; list and watch for CCM v0.1.x, which watched its
		// load balancer (loadBalancer.go).
		{rule("loadbalancer.harvesterhci.io", "loadbalancers", "get", "list", "watch", "create", "update", "delete"), ccm,
			"`pkg/cloud-controller-manager/loadbalancer.go` (list, watch: v0.1.x `loadBalancer.go`)"},
		// CCM instance.go getVM; CSI pkg/csi/controller_server.go and pkg/controller/node/controller.go: patch
		// is the declarative volume hotplug of Harvester 1.8 and later.
		{rule("kubevirt.io", "virtualmachines", "get", "patch"), ccmCSI,
			"CCM `pkg/cloud-controller-manager/instance.go`; CSI `pkg/csi/controller_server.go`, `pkg/controller/node/controller.go` (patch: volume hotplug on Harvester ≥ 1.8)"},
		// CCM instance.go and the VMI controller's informer (pkg/controller/virtualmachineinstance); CSI
		// manager.go discoverVMIName, controller_server.go, node_server.go.
		{rule("kubevirt.io", "virtualmachineinstances", "get", "list", "watch"), ccmCSI,
			"CCM `instance.go`, `pkg/controller/virtualmachineinstance/controller.go` (informer); CSI `pkg/csi/manager.go`, `controller_server.go`, `node_server.go`"},
		// CSI controller_server.go, node/controller.go: the volume hotplug of Harvester before 1.8.
		{rule("subresources.kubevirt.io", "virtualmachines/addvolume", "update"), csi,
			"`pkg/csi/controller_server.go` (hotplug on Harvester < 1.8)"},
		{rule("subresources.kubevirt.io", "virtualmachines/removevolume", "update"), csi,
			"`pkg/csi/controller_server.go`, `pkg/controller/node/controller.go` (hotplug on Harvester < 1.8)"},
		{rule("subresources.kubevirt.io", "virtualmachineinstances/removevolume", "update"), csi,
			"`pkg/csi/controller_server.go` (hotplug on Harvester < 1.8)"},
		// CCM pkg/controller/virtualmachineinstance/controller.go OnVmiChanged.
		{rule("subresources.kubevirt.io", "virtualmachineinstances/guestosinfo", "get"), ccm,
			"`pkg/controller/virtualmachineinstance/controller.go`"},
		// CSI controller_server.go, node_server.go: the guest's volumes are claims in the VM namespace.
		{rule("", "persistentvolumeclaims", "get", "create", "update", "delete"), csi,
			"`pkg/csi/controller_server.go`, `node_server.go`"},
		// CSI controller_server.go isVolumeInUse.
		{rule("", "pods", "list"), csi, "`pkg/csi/controller_server.go` (`isVolumeInUse`)"},
		// CSI controller_server.go: snapshots of the guest's volumes.
		{rule("snapshot.storage.k8s.io", "volumesnapshots", "get", "list", "create", "delete"), csi, "`pkg/csi/controller_server.go`"},
		// CSI controller_server.go: backups and restores (Harvester 1.8 and later).
		{rule("harvesterhci.io", "volumeremotebackups", "get", "create", "delete"), csi, "`pkg/csi/controller_server.go`"},
		{rule("harvesterhci.io", "volumeremoterestores", "get", "create", "delete"), csi, "`pkg/csi/controller_server.go`"},
	}
	// networkFilesystemGrants go in a Role in harvester-system, where the CSI driver keeps the NetworkFilesystems
	// of Longhorn RWX volumes (controller_server.go: NewControllerServer lists them and offers RWX volumes only
	// when it may; createNetworkFilesystem, publishRWXVolume, DeleteVolume; node_server.go nodeStageRWXVolume).
	// Their names are volume names, not known in advance: the account may touch any guest's NetworkFilesystem.
	networkFilesystemGrants = []grant{
		{rule("harvesterhci.io", "networkfilesystems", "get", "list", "create", "update", "delete"), csi,
			"`pkg/csi/controller_server.go`, `node_server.go` (Longhorn RWX volumes)"},
	}
	// guestClusterGrants go in a ClusterRole: cluster-scoped reads.
	guestClusterGrants = []grant{
		// CSI controller_server.go: validStorageClass, getHostSC (RWX), buildHostPVCFromSnap.
		{rule("storage.k8s.io", "storageclasses", "get"), csi,
			"`pkg/csi/controller_server.go` (`validStorageClass`, `getHostSC`, `buildHostPVCFromSnap`)"},
		// CSI controller_server.go waitForVASettled: without it a block volume still attached to another host
		// is not waited for.
		{rule("storage.k8s.io", "volumeattachments", "list"), csi, "`pkg/csi/controller_server.go` (`waitForVASettled`)"},
		// CSI manager.go Run (server-version; it stops without it: Harvester's harvester-authenticated role
		// grants it only from Harvester 1.4), controller_server.go getHarvCSIConfig (csi-driver-config) and
		// validateOnlineExpansion, node_server.go NodeExpandVolume (csi-online-expand-validation).
		{rbacv1.PolicyRule{APIGroups: []string{"harvesterhci.io"}, Resources: []string{"settings"}, Verbs: []string{"get"},
			ResourceNames: []string{"csi-driver-config", "csi-online-expand-validation", "server-version"}}, csi,
			"`pkg/csi/manager.go` (`server-version`: the CSI driver stops without it), `controller_server.go`, `node_server.go`"},
	}

	// The rules of the three roles, in the grants' order.
	guestRules             = policyRules(guestGrants)
	networkFilesystemRules = policyRules(networkFilesystemGrants)
	guestClusterRules      = policyRules(guestClusterGrants)
)

// The components of a guest cluster that call Harvester, as the guide's table names them.
const (
	ccm    = "CCM"
	csi    = "CSI"
	ccmCSI = ccm + ", " + csi
)

// grant is one rule of the account's roles with what the guide's table says of it besides the rule: the
// component that needs it and its upstream caller (markdown).
type grant struct {
	rule              rbacv1.PolicyRule
	component, caller string
}

func policyRules(grants []grant) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(grants))
	for i, g := range grants {
		out[i] = g.rule
	}
	return out
}

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// Access is what Ensure needs, in the VM namespace and where the account's other objects go: the pre-flight of
// --harvester-generate-cloud-provider-config asks for it.
var Access = slices.Concat(ensureAccess, tokenAccess)

// ensureAccess is what Ensure needs besides the token wait (tokenAccess): making and reading the objects, and —
// RBAC's escalation check — every permission its roles grant, where they grant it.
var ensureAccess = slices.Concat([]kube.Access{
	{Resource: "serviceaccounts", Verb: "create"},
	{Resource: "serviceaccounts", Verb: "get"},
	{Resource: "secrets", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "get"},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "create"},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "get"},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "create", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "roles", Verb: "get", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "create", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "rolebindings", Verb: "get", Namespace: harvesterSystemNamespace},
	{Group: rbacv1.GroupName, Resource: "clusterroles", Verb: "create", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterroles", Verb: "get", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterrolebindings", Verb: "create", ClusterScoped: true},
	{Group: rbacv1.GroupName, Resource: "clusterrolebindings", Verb: "get", ClusterScoped: true},
}, ruleAccess(guestRules, "", false), ruleAccess(networkFilesystemRules, harvesterSystemNamespace, false), ruleAccess(guestClusterRules, "", true))

// ruleAccess lists what rules grant, one question per verb, resource and name.
func ruleAccess(rules []rbacv1.PolicyRule, ns string, clusterScoped bool) []kube.Access {
	var out []kube.Access
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, kube.Access{Group: g, Resource: res, Verb: v, Name: n, Namespace: ns, ClusterScoped: clusterScoped})
					}
				}
			}
		}
	}
	return out
}
