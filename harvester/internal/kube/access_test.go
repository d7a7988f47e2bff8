package kube

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestRulesAllow(t *testing.T) {
	rule := func(groups, resources, verbs []string, names ...string) authorizationv1.ResourceRule {
		return authorizationv1.ResourceRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
	}
	kv := "kubevirt.io"
	for _, tc := range []struct {
		name  string
		rules []authorizationv1.ResourceRule
		a     Access
		want  bool
	}{
		{"exact", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"virtualmachines"}, []string{"create"})}, Access{Group: kv, Resource: "virtualmachines", Verb: "create"}, true},
		{"other verb", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"virtualmachines"}, []string{"get"})}, Access{Group: kv, Resource: "virtualmachines", Verb: "create"}, false},
		{"other group", []authorizationv1.ResourceRule{rule([]string{""}, []string{"virtualmachines"}, []string{"create"})}, Access{Group: kv, Resource: "virtualmachines", Verb: "create"}, false},
		{"core group is not any group", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"secrets"}, []string{"get"})}, Access{Resource: "secrets", Verb: "get"}, false},
		{"all", []authorizationv1.ResourceRule{rule([]string{"*"}, []string{"*"}, []string{"*"})}, Access{Group: kv, Resource: "virtualmachines", Verb: "delete"}, true},
		{"any verb", []authorizationv1.ResourceRule{rule([]string{""}, []string{"secrets"}, []string{"*"})}, Access{Resource: "secrets", Verb: "patch"}, true},
		{"any group", []authorizationv1.ResourceRule{rule([]string{"*"}, []string{"secrets"}, []string{"get"})}, Access{Resource: "secrets", Verb: "get"}, true},
		{"any resource", []authorizationv1.ResourceRule{rule([]string{""}, []string{"*"}, []string{"get"})}, Access{Resource: "secrets", Verb: "get"}, true},
		{"resource does not grant its subresource", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"virtualmachines"}, []string{"*"})}, Access{Group: kv, Resource: "virtualmachines/start", Verb: "update"}, false},
		{"subresource", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"virtualmachines/start"}, []string{"update"})}, Access{Group: kv, Resource: "virtualmachines/start", Verb: "update"}, true},
		{"subresource does not grant its resource", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"virtualmachines/start"}, []string{"update"})}, Access{Group: kv, Resource: "virtualmachines", Verb: "update"}, false},
		{"any resource's subresource", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"*/start"}, []string{"update"})}, Access{Group: kv, Resource: "virtualmachines/start", Verb: "update"}, true},
		{"any resource's other subresource", []authorizationv1.ResourceRule{rule([]string{kv}, []string{"*/stop"}, []string{"update"})}, Access{Group: kv, Resource: "virtualmachines/start", Verb: "update"}, false},
		{"*/sub is no resource", []authorizationv1.ResourceRule{rule([]string{""}, []string{"*/status"}, []string{"get"})}, Access{Resource: "pods", Verb: "get"}, false},
		{"named", []authorizationv1.ResourceRule{rule([]string{""}, []string{"configmaps"}, []string{"get"}, "a", "b")}, Access{Resource: "configmaps", Verb: "get", Name: "b"}, true},
		{"other name", []authorizationv1.ResourceRule{rule([]string{""}, []string{"configmaps"}, []string{"get"}, "a")}, Access{Resource: "configmaps", Verb: "get", Name: "c"}, false},
		{"names do not grant unnamed", []authorizationv1.ResourceRule{rule([]string{""}, []string{"configmaps"}, []string{"create"}, "a")}, Access{Resource: "configmaps", Verb: "create"}, false},
		{"unnamed grants named", []authorizationv1.ResourceRule{rule([]string{""}, []string{"configmaps"}, []string{"get"})}, Access{Resource: "configmaps", Verb: "get", Name: "a"}, true},
		{"second rule", []authorizationv1.ResourceRule{rule([]string{""}, []string{"pods"}, []string{"get"}), rule([]string{""}, []string{"configmaps"}, []string{"get"})}, Access{Resource: "configmaps", Verb: "get"}, true},
		{"no rules", nil, Access{Resource: "configmaps", Verb: "get"}, false},
	} {
		if got := RulesAllow(tc.rules, tc.a); got != tc.want {
			t.Errorf("%s: RulesAllow(%v) = %v, want %v", tc.name, tc.a, got, tc.want)
		}
	}
}
