package guestaccount

import (
	"os"
	"slices"
	"strings"
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
	if n, want := len(ruleAccess(guestRules, "", false)), 30; n != want {
		t.Errorf("%d questions for the namespace's rules, want %d", n, want)
	}
}

// The README's table says what the roles hold, row for rule.
func TestREADMETable(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "**What the account may do**")
	if !ok {
		t.Fatal("README.md lacks the table of what the guest's account may do")
	}
	_, table, _ = strings.Cut(table, "|---")
	var rows [][]string
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(line, " | ")
		for i := range cells {
			cells[i] = strings.Trim(cells[i], "| ")
		}
		rows = append(rows, cells)
	}
	used := make([]bool, len(rows))
	for _, set := range []struct {
		where string
		rules []rbacv1.PolicyRule
	}{{"namespace", guestRules}, {"`harvester-system`", networkFilesystemRules}, {"cluster", guestClusterRules}} {
		for _, rule := range set.rules {
			group := "`" + rule.APIGroups[0] + "`"
			if rule.APIGroups[0] == "" {
				group = "core"
			}
			found := false
			for i, row := range rows {
				if len(row) != 6 || row[1] != group || row[3] != strings.Join(rule.Verbs, ", ") || row[4] != set.where {
					continue
				}
				names := slices.Concat(rule.Resources, rule.ResourceNames)
				if !slices.ContainsFunc(names, func(n string) bool { return !strings.Contains(row[2], "`"+n+"`") }) {
					found, used[i] = true, true
				}
			}
			if !found {
				t.Errorf("no README row for %s %v %v %v (%s)", group, rule.Resources, rule.ResourceNames, rule.Verbs, set.where)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("README row %v matches no rule", rows[i])
		}
	}
}
