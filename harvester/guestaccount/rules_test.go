package guestaccount

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The pre-flight asks for every permission the roles grant: the API server lets a credential grant only what it holds.
func TestAccessCoversTheRoles(t *testing.T) {
	asked := map[string]bool{}
	for _, a := range ensureAccess {
		asked[a.String()+" cluster="+map[bool]string{true: "yes", false: "no"}[a.ClusterScoped]] = true
	}
	for _, want := range []string{
		"patch virtualmachines cluster=no", "update virtualmachines/addvolume cluster=no", "delete volumeremoterestores cluster=no",
		"update networkfilesystems in namespace harvester-system cluster=no", "create roles in namespace harvester-system cluster=no",
		"get settings server-version cluster=yes", "get settings csi-driver-config cluster=yes", "list volumeattachments cluster=yes",
		"create clusterroles cluster=yes", "create clusterrolebindings cluster=yes", "create roles cluster=no", "create rolebindings cluster=no",
	} {
		if !asked[want] {
			t.Errorf("the pre-flight does not ask for %s", want)
		}
	}
	// How many verbs the roles grant, counted by hand: a verb added to a grant must be added here too.
	for _, c := range []struct {
		where string
		rules []rbacv1.PolicyRule
		want  int
	}{{"the namespace's", guestRules, 30}, {"harvester-system's", networkFilesystemRules, 5}, {"the cluster's", guestClusterRules, 5}} {
		if n := len(ruleAccess(c.rules, "", false)); n != c.want {
			t.Errorf("%d questions for %s rules, want %d", n, c.where, c.want)
		}
	}
}

// docs/cloud-provider.md promises under its table what the roles never hold, whatever the grants above it say: no Secrets and
// nothing of RBAC (the account could make itself more), no wildcard, no VM create or delete, nothing but reads
// cluster-wide, and of Harvester's settings only the ones named.
func TestRulesKeepTheGuidesPromises(t *testing.T) {
	forbidden := []string{"*", "secrets", "serviceaccounts", "roles", "rolebindings", "clusterroles", "clusterrolebindings", "escalate", "bind", "impersonate"}
	for _, set := range []struct {
		rules   []rbacv1.PolicyRule
		cluster bool
	}{{guestRules, false}, {networkFilesystemRules, false}, {guestClusterRules, true}} {
		for _, r := range set.rules {
			words := slices.Concat(r.APIGroups, r.Resources, r.Verbs)
			if slices.ContainsFunc(words, func(w string) bool { return slices.Contains(forbidden, w) }) || slices.Contains(r.APIGroups, rbacv1.GroupName) {
				t.Errorf("rule %v grants what docs/cloud-provider.md says the account never has", r)
			}
			if slices.Contains(r.Resources, "virtualmachines") && (slices.Contains(r.Verbs, "create") || slices.Contains(r.Verbs, "delete")) {
				t.Errorf("rule %v creates or deletes VMs", r)
			}
			if set.cluster && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" }) {
				t.Errorf("cluster-wide rule %v does more than read", r)
			}
			if slices.Contains(r.Resources, "settings") && len(r.ResourceNames) == 0 {
				t.Errorf("rule %v reads every Harvester setting", r)
			}
		}
	}
}
