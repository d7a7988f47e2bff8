package harvester

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// exampleRole is the Role of docs/security.md, "Which Secrets a pool can read": the first YAML block after the
// heading.
func exampleRole(t *testing.T) rbacv1.Role {
	t.Helper()
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Which Secrets a pool can read\n")
	if !ok {
		t.Fatal(`docs/security.md has no section "Which Secrets a pool can read"`)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("the section has no YAML block")
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict([]byte(block), &role); err != nil {
		t.Fatalf("the example Role does not parse: %v", err)
	}
	if role.Kind != "Role" || role.APIVersion != rbacv1.SchemeGroupVersion.String() || role.Namespace == "" {
		t.Fatalf("the example is no namespaced Role: %s %s in %q", role.APIVersion, role.Kind, role.Namespace)
	}
	return role
}

// grants reports whether rule allows access on some object (named: on the objects its resourceNames name).
func grants(rule rbacv1.PolicyRule, a kube.Access) bool {
	return slices.Contains(rule.APIGroups, a.Group) && slices.Contains(rule.Resources, a.Resource) && slices.Contains(rule.Verbs, a.Verb)
}

// The example Role of docs/security.md is what the permission table asks for in the VM namespace — always, the
// resource quotas, the data Secrets — and nothing more, with get on Secrets only for the Secrets it names: a
// change to the table (or to the example) that parts them fails here.
func TestExampleRoleIsThePermissionTable(t *testing.T) {
	role := exampleRole(t)
	var needed []kube.Access
	for _, n := range Permissions() {
		dataSecrets := slices.Contains(n.Flags, config.FlagUserDataSecret)
		if n.Where != "VM namespace" || (len(n.Flags) > 0 && !dataSecrets) {
			continue // a flag the example does not use; or not in the VM namespace
		}
		for _, a := range n.Access {
			if a.ClusterScoped || a.Namespace != "" {
				continue // not in a Role of the VM namespace
			}
			needed = append(needed, a)
			i := slices.IndexFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return grants(r, a) })
			switch {
			case i < 0:
				t.Errorf("the example Role does not allow %s (%s), which the permission table asks for (%s)", a, a.Group, n.When)
			case dataSecrets && len(role.Rules[i].ResourceNames) == 0:
				t.Errorf("the example Role allows %s on every Secret: it must name the data Secrets (resourceNames)", a)
			}
		}
	}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					a := kube.Access{Group: g, Resource: res, Verb: v}
					if !slices.Contains(needed, a) {
						t.Errorf("the example Role allows %s (%s), which the permission table does not ask for", a, g)
					}
					if res == "secrets" && slices.Contains([]string{"get", "list", "watch", "*"}, v) && len(r.ResourceNames) == 0 {
						t.Errorf("the example Role lets the credential %s every Secret of the namespace", v)
					}
				}
			}
		}
	}
}
