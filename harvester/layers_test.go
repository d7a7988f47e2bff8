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

// layers is every package of the module and what it may import from the module. The plugin's packages sit floor
// by floor; each imports only what its row names, from floors below it (harvester/internal/configtest and
// harvester/internal/kubefake in tests only; internal/readmetest, outside the plugin, too):
//
//  1. what knows no flag and no machine: the bound on quantities harvester/internal/quantity, the client layer
//     harvester/internal/kube, harvester/internal/lists and harvester/internal/logging, harvester/identity, cloudinit, userdata, bounded input
//     (internal/bounded), internal/version and internal/rancher;
//  2. harvester/config: flags to a validated Config;
//  3. harvester/objects, pure objects from a Config, harvester/autoscale, a pool's autoscaling annotations from
//     them, and harvester/connection, the credential to a client;
//  4. harvester/ippool, address allocation, harvester/iplease, addresses leased by Harvester's managed DHCP, and
//     harvester/guestaccount, the guest cluster's cloud-provider account;
//  5. harvester/preflight, the pre-flight judging the machine's objects against the cluster;
//  6. package harvester, the lifecycle rancher-machine calls;
//  7. the command, cmd/docker-machine-driver-harvester.
//
// Beside the plugin: the repository's own tools (internal/…, hack/…), which the plugin never imports, and the test
// bed (e2e/…), which drives the built plugin and imports the plugin's packages in its tests only.
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
	{pkg: "internal/bounded", tests: []string{"internal/hostile"}, noClient: true},
	{pkg: "userdata", may: []string{"internal/bounded"}, tests: []string{"internal/hostile"}},
	{pkg: "internal/version"},
	{pkg: "internal/rancher"},
	// Only tests import these two.
	{pkg: "harvester/internal/configtest", may: []string{"harvester/config"}},
	{pkg: "harvester/internal/kubefake", may: []string{"harvester/internal/kube", "harvester/internal/logging"}},

	{pkg: "harvester/config", may: []string{"cloudinit", "cloudinit/networkconfig", "userdata", "internal/bounded", "harvester/internal/lists"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/logging", "internal/readmetest", "internal/hostile", "internal/rancher"}, noClient: true},

	{pkg: "harvester/objects", may: []string{"harvester/config", "harvester/internal/quantity", "cloudinit", "cloudinit/networkconfig", "internal/bounded"},
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

	// It takes the machine's objects and a client and returns one typed result: it knows no Driver.
	{pkg: "harvester/preflight", may: []string{"harvester/config", "harvester/objects", "harvester/connection", "harvester/ippool", "harvester/iplease",
		"harvester/internal/kube", "harvester/internal/lists", "harvester/internal/logging"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake"}},

	{pkg: "harvester", may: []string{"harvester/config", "harvester/objects", "harvester/connection", "harvester/ippool", "harvester/iplease", "harvester/guestaccount",
		"harvester/preflight", "harvester/identity", "harvester/internal/kube", "harvester/internal/lists", "harvester/internal/logging", "internal/version"},
		tests: []string{"harvester/internal/configtest", "harvester/internal/kubefake"}},

	{pkg: "cmd/docker-machine-driver-harvester", may: []string{"harvester", "harvester/preflight", "harvester/autoscale", "harvester/config", "harvester/objects", "harvester/connection", "harvester/guestaccount",
		"harvester/identity", "internal/bounded", "internal/rancher", "internal/version"},
		tests: []string{"internal/doccheck", "internal/hostile", "internal/nodedriver", "internal/rancher"}},

	// The repository's tools: golden files, the guides' generated sections and checks, hostile inputs, what a test
	// does without its tool, the release's manifests and the UI extension's archive, and the code's measures.
	{pkg: "internal/golden"},
	{pkg: "internal/hostile"},
	{pkg: "internal/testenv"},
	{pkg: "internal/readmetest"},
	{pkg: "internal/doccheck", tests: []string{"internal/readmetest"}},
	{pkg: "internal/nodedriver", may: []string{"harvester/identity"}, tests: []string{"harvester/config"}},
	{pkg: "internal/uiplugin"},
	{pkg: "internal/release", tests: []string{"internal/readmetest", "internal/testenv"}},
	{pkg: "hack/nodedriver", may: []string{"harvester/identity", "internal/nodedriver", "internal/release"}},
	{pkg: "hack/prereqs"},
	{pkg: "hack/uiplugin", may: []string{"internal/uiplugin"}},
	{pkg: "hack/measure"}, // reads the module's code as data: it imports none of it

	// The test bed, floor by floor: its internal helpers; the control plane, what it loads and the stand-ins; the
	// bed; the commands and scenarios on top. Its code imports no package of the plugin: the scenarios drive the
	// built plugin, and only tests reach into the plugin's packages (for its flag names and its Driver).
	{pkg: "e2e/internal/apply"},
	{pkg: "e2e/internal/kubeconfig"},
	{pkg: "e2e/internal/ownedtemp"},
	{pkg: "e2e/internal/process"},
	{pkg: "e2e/internal/vmspec"},
	{pkg: "e2e/internal/repo", may: []string{"internal/testenv"}},
	{pkg: "e2e/internal/rmachine", may: []string{"e2e/internal/repo"}},
	{pkg: "e2e/apiproxy"},
	{pkg: "e2e/rancherproxy"},
	{pkg: "e2e/await"},
	{pkg: "e2e/internal/countproxy", may: []string{"e2e/apiproxy"}},
	{pkg: "e2e/guest", may: []string{"e2e/internal/repo", "internal/testenv"}},
	{pkg: "e2e/controlplane", may: []string{"e2e/internal/kubeconfig", "e2e/internal/ownedtemp", "e2e/internal/process", "e2e/internal/repo"}},
	{pkg: "e2e/upstream", may: []string{"e2e/internal/apply", "e2e/internal/repo"}},
	{pkg: "e2e/crds", may: []string{"e2e/internal/apply"}, tests: []string{"e2e/testbed", "e2e/upstream"}},
	{pkg: "e2e/fixtures", may: []string{"e2e/internal/apply"}, tests: []string{"e2e/internal/repo", "e2e/testbed", "e2e/upstream"}},
	{pkg: "e2e/credential", may: []string{"e2e/await", "e2e/internal/kubeconfig"}, tests: []string{"e2e/testbed"}},
	{pkg: "e2e/admission", may: []string{"e2e/internal/apply", "e2e/internal/process"}, tests: []string{"e2e/internal/vmspec", "e2e/testbed"}},
	{pkg: "e2e/virtcontroller", may: []string{"e2e/internal/process"}, tests: []string{"e2e/internal/vmspec", "e2e/testbed", "e2e/upstream"}},
	{pkg: "e2e/standin", may: []string{"e2e/guest", "e2e/internal/ownedtemp"}, tests: []string{"e2e/fixtures", "e2e/internal/vmspec", "e2e/testbed"}},
	{pkg: "e2e/testbed", may: []string{"e2e/admission", "e2e/await", "e2e/controlplane", "e2e/crds", "e2e/credential", "e2e/fixtures", "e2e/internal/apply",
		"e2e/internal/repo", "e2e/standin", "e2e/upstream", "e2e/virtcontroller", "internal/testenv"}, tests: []string{"e2e/fixtures", "e2e/internal/vmspec", "e2e/standin"}},
	{pkg: "e2e/cmd/harvester-sim", may: []string{"e2e/standin", "e2e/testbed"}},
	{pkg: "e2e/cmd/demo", may: []string{"e2e/guest", "e2e/internal/ownedtemp", "e2e/internal/rmachine", "e2e/standin", "e2e/testbed"}},
	{pkg: "e2e/cmd/bench", may: []string{"e2e/internal/countproxy", "e2e/internal/ownedtemp", "e2e/internal/rmachine", "e2e/standin", "e2e/testbed"}},
	{pkg: "e2e/rancher", tests: []string{"e2e/controlplane", "e2e/crds", "e2e/internal/apply", "e2e/internal/kubeconfig", "e2e/internal/repo",
		"harvester/config", "harvester/objects", "internal/rancher", "internal/testenv"}},
	{pkg: "e2e/release", tests: []string{"e2e/controlplane", "e2e/internal/repo", "harvester", "harvester/identity", "internal/nodedriver", "internal/release",
		"internal/testenv", "internal/uiplugin"}},
	{pkg: "e2e/scenarios", tests: []string{"e2e/admission", "e2e/apiproxy", "e2e/controlplane", "e2e/crds", "e2e/credential", "e2e/fixtures", "e2e/guest",
		"e2e/internal/apply", "e2e/internal/countproxy", "e2e/internal/ownedtemp", "e2e/internal/repo", "e2e/internal/rmachine", "e2e/internal/vmspec",
		"e2e/rancherproxy", "e2e/standin", "e2e/testbed", "e2e/upstream", "harvester", "harvester/config", "harvester/identity", "harvester/preflight",
		"internal/rancher", "internal/testenv"}},
}

// The layers hold: every package of the module has its row, and imports only what its row allows. It reads what
// each package really imports from `go list`.
func TestLayersImportOnlyDownward(t *testing.T) {
	const mod = "github.com/harvester/docker-machine-driver-harvester/"
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}|{{join .Deps " "}}`,
		mod+"...").Output()
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
			t.Errorf("the layer table names %s, which is no package of the module", l.pkg)
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
