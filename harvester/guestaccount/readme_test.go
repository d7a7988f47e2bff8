package guestaccount

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/readmetest"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the table of what the guest's account may do in docs/cloud-provider.md from the roles' grants")

const (
	readmeRBACStart = "<!-- rbac:start (generated from harvester/guestaccount/rules.go: go test ./harvester/guestaccount -run README -update-readme) -->"
	readmeRBACEnd   = "<!-- rbac:end -->"
)

// backticked renders names as markdown code, comma-separated.
func backticked(names []string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}

// rbacMarkdown renders the table of what the guest's account may do (docs/cloud-provider.md): a row a grant, the VM namespace's
// Role first, then harvester-system's, then the ClusterRole, each in its grants' order.
func rbacMarkdown() string {
	var b strings.Builder
	b.WriteString("| Component | API group | Resource | Verbs | Where | Upstream caller |\n|---|---|---|---|---|---|\n")
	for _, set := range []struct {
		where  string
		grants []grant
	}{{"namespace", guestGrants}, {"`" + harvesterSystemNamespace + "`", networkFilesystemGrants}, {"cluster", guestClusterGrants}} {
		for _, g := range set.grants {
			group := backticked(g.rule.APIGroups)
			if group == "``" {
				group = "core"
			}
			resource := backticked(g.rule.Resources)
			if len(g.rule.ResourceNames) > 0 {
				resource += " named " + backticked(g.rule.ResourceNames)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", g.component, group, resource, strings.Join(g.rule.Verbs, ", "), set.where, g.caller)
		}
	}
	return b.String()
}

func TestREADMERBACTable(t *testing.T) {
	readmetest.Generated(t, "../../docs/cloud-provider.md", readmeRBACStart, readmeRBACEnd, rbacMarkdown(),
		"go test ./harvester/guestaccount -run README -update-readme", *updateREADME)
}
