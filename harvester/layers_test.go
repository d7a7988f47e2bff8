package harvester

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layer is one package of the plugin and what it may import from this module.
type layer struct {
	pkg   string   // the package, below the module's path
	may   []string // the module's packages its code may import
	tests []string // and those its tests may import besides
	// noClient forbids the API clients among its dependencies, direct or not: it decides without a cluster.
	noClient bool
	// pure forbids randomness among its direct imports: what a create draws comes in as an argument.
	pure bool
}

// layers is every package the plugin is built from, floor by floor; each imports only what its row names, from
// floors below it (harvester/internal/configtest and harvester/internal/kubefake in tests only; internal/readmetest,
// outside the plugin, too):
//
//  1. what knows no flag and no machine: the bound on quantities harvester/internal/quantity, the client layer
//     harvester/internal/kube, harvester/internal/lists and harvester/internal/logging, harvester/identity, cloudinit, userdata, internal/version and internal/rancher;
//  2. harvester/config: flags to a validated Config;
//  3. harvester/objects, pure objects from a Config, harvester/autoscale, a pool's autoscaling annotations from
//     them, and harvester/connection, the credential to a client;
//  4. harvester/ippool, address allocation, harvester/iplease, addresses leased by Harvester's managed DHCP, and
//     harvester/guestaccount, the guest cluster's cloud-provider account;
//  5. package harvester, the lifecycle rancher-machine calls;
//  6. the command, cmd/docker-machine-driver-harvester.
var layers = []layer{
	{pkg: "harvester/internal/quantity", tests: []string{"internal/hostile"}, noClient: true},
	{pkg: "harvester/internal/kube", may: []string{"harvester/internal/quantity"}, tests: []string{"internal/hostile", "harvester/internal/configtest"}},
	{pkg: "harvester/internal/lists"},
	{pkg: "harvester/internal/logging"},
	// The driver's name only: it translates flag names, knows no flag table and no lifecycle.
	{pkg: "harvester/identity", noClient: true},
	{pkg: "cloudinit/internal/yamlnode"},
	{pkg: "cloudinit/networkconfig", may: []string{"cloudinit/internal/yamlnode"}, tests: []string{"internal/golden", "internal/testenv"}},
	{pkg: "cloudinit", may: []string{"cloudinit/internal/yamlnode", "userdata"}, tests: []string{"cloudinit/networkconfig", "internal/golden", "internal/testenv"}},
	{pkg: "userdata", tests: []string{"internal/hostile"}},
	{pkg: "internal/version"},
	{pkg: "internal/rancher"},
	// Only tests import these two.
	{pkg: "harvester/internal/configtest", may: []string{"harvester/config"}},
	{pkg: "harvester/internal/kubefake", may: []string{"harvester/internal/kube", "harvester/internal/logging"}},

	{pkg: "harvester/config", may: []string{"cloudinit", "cloudinit/networkconfig", "userdata", "harvester/internal/lists"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/logging", "internal/readmetest", "internal/hostile", "internal/rancher"}, noClient: true},

	{pkg: "harvester/objects", may: []string{"harvester/config", "harvester/internal/quantity", "cloudinit", "cloudinit/networkconfig", "userdata"},
		tests: []string{"harvester/internal/configtest", "internal/golden", "internal/hostile", "internal/testenv"}, noClient: true, pure: true},
	// The autoscaler's annotations of a pool, from the VM the builders make: pure, as they are.
	{pkg: "harvester/autoscale", may: []string{"harvester/config", "internal/rancher"},
		tests: []string{"harvester/objects", "harvester/internal/configtest", "internal/golden"}, noClient: true, pure: true},
	{pkg: "harvester/connection", may: []string{"harvester/config", "harvester/internal/kube", "internal/version"},
		tests: []string{"harvester/internal/configtest"}},

	{pkg: "harvester/ippool", may: []string{"harvester/config", "harvester/objects", "harvester/internal/kube", "harvester/internal/lists", "harvester/internal/logging"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake"}},
	{pkg: "harvester/iplease", may: []string{"harvester/config", "harvester/objects", "harvester/internal/kube", "harvester/internal/lists", "harvester/internal/logging"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake"}},
	{pkg: "harvester/guestaccount", may: []string{"harvester/config", "harvester/connection", "harvester/internal/kube", "harvester/internal/logging", "harvester/objects", "cloudinit"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake", "internal/readmetest"}},

	{pkg: "harvester", may: []string{"harvester/config", "harvester/objects", "harvester/connection", "harvester/ippool", "harvester/iplease", "harvester/guestaccount",
		"harvester/identity", "harvester/internal/kube", "harvester/internal/lists", "harvester/internal/logging", "internal/version"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake"}},

	{pkg: "cmd/docker-machine-driver-harvester", may: []string{"harvester", "harvester/autoscale", "harvester/config", "harvester/objects", "harvester/connection", "harvester/guestaccount",
		"harvester/identity", "internal/rancher", "internal/version", "userdata"},
		tests: []string{"internal/doccheck", "internal/hostile", "internal/nodedriver", "internal/rancher"}},
}

// The layers hold: every package the plugin is built from has its row, and imports only what its row allows. It
// reads what each package really imports from `go list`.
func TestLayersImportOnlyDownward(t *testing.T) {
	const mod = "github.com/harvester/docker-machine-driver-harvester/"
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}|{{join .Deps " "}}`,
		mod+"harvester/...", mod+"cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type listed struct{ imports, testImports, deps []string }
	pkgs := map[string]listed{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		if pkg, ok := strings.CutPrefix(fields[0], mod); ok {
			pkgs[pkg] = listed{strings.Fields(fields[1]), strings.Fields(fields[2]), strings.Fields(fields[3])}
		}
	}
	rows := map[string]layer{}
	for _, l := range layers {
		rows[l.pkg] = l
		if _, ok := pkgs[l.pkg]; !ok {
			t.Errorf("the layer table names %s, which is no package of the plugin", l.pkg)
		}
	}
	for pkg, p := range pkgs {
		l, ok := rows[pkg]
		if !ok {
			t.Errorf("%s has no row in the layer table (layers_test.go): give it the floor it sits on and what it may import", pkg)
			continue
		}
		for _, imp := range p.imports {
			if dep, ok := strings.CutPrefix(imp, mod); ok && !slices.Contains(l.may, dep) {
				t.Errorf("%s imports %s, which its row in the layer table does not allow: it may import %s", pkg, dep, allowed(l.may))
			}
			if l.pure && slices.Contains([]string{"crypto/rand", "math/rand", "math/rand/v2"}, imp) {
				t.Errorf("%s imports %s: its functions must stay pure", pkg, imp)
			}
		}
		for _, imp := range p.testImports {
			if dep, ok := strings.CutPrefix(imp, mod); ok && dep != pkg && !slices.Contains(l.may, dep) && !slices.Contains(l.tests, dep) {
				t.Errorf("the tests of %s import %s, which its row in the layer table does not allow: they may import %s", pkg, dep, allowed(slices.Concat(l.may, l.tests)))
			}
		}
		if l.noClient {
			for _, client := range []string{"k8s.io/client-go/dynamic", "k8s.io/client-go/kubernetes"} {
				if slices.Contains(p.deps, client) {
					t.Errorf("%s depends on %s: it decides without a cluster", pkg, client)
				}
			}
		}
	}
}

// allowed words a row's list of packages.
func allowed(pkgs []string) string {
	if len(pkgs) == 0 {
		return "nothing of this module"
	}
	return strings.Join(pkgs, ", ")
}
