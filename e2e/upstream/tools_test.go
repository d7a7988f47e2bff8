package upstream

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// The tool modules run the upstream code the root go.mod pins: hack/tools/harvester requires the
// github.com/harvester/harvester of go.mod, hack/tools/kubevirt the kubevirt.io/kubevirt of go.mod's
// kubevirt.io/api. Bumping one without the other fails here.
func TestToolsPinTheRootVersions(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	rootMod := read("go.mod")
	for _, c := range []struct{ tool, module, rootModule string }{
		{"harvester", HarvesterModule, HarvesterModule},
		{"kubevirt", "kubevirt.io/kubevirt", "kubevirt.io/api"},
	} {
		toolMod := filepath.Join("hack", "tools", c.tool, "go.mod")
		want, got := required(rootMod, c.rootModule), required(read(toolMod), c.module)
		if want == "" || got != want {
			t.Errorf("%s requires %s %q; go.mod requires %s %q", toolMod, c.module, got, c.rootModule, want)
		}
	}
}

// The harvester tool's mutator reads Kube-OVN's Subnets with the types of the github.com/kubeovn/kube-ovn the root
// module's build list selects (through github.com/harvester/harvester), the module the bed's Subnet CRD comes
// from (KubeOVNSubnetCRD): the types and the CRD are of one version.
func TestHarvesterToolPinsTheRootKubeOVN(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mod, err := repo.ModuleDir(ctx, KubeOVNModule)
	if err != nil {
		t.Fatal(err)
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	toolMod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "harvester", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if got := required(toolMod, KubeOVNModule); got != mod.Version {
		t.Errorf("hack/tools/harvester/go.mod requires %s %q; the root module's build list selects %s", KubeOVNModule, got, mod.Version)
	}
}

// required returns the version a go.mod's require directives give module path, "" when none does.
func required(gomod []byte, path string) string {
	m := regexp.MustCompile(`(?m)^(?:require)?\s+` + regexp.QuoteMeta(path) + `\s+(v\S+)`).FindSubmatch(gomod)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func TestRequired(t *testing.T) {
	gomod := []byte("module x\n\nrequire a.io/b v1.2.3\n\nrequire (\n\ta.io/b/c v0.1.0 // indirect\n\td.io/e v2.0.0\n)\n\nreplace d.io/e => d.io/e v2.0.1\n")
	for path, want := range map[string]string{"a.io/b": "v1.2.3", "a.io/b/c": "v0.1.0", "d.io/e": "v2.0.0", "a.io": ""} {
		if got := required(gomod, path); got != want {
			t.Errorf("required(%s) = %q, want %q", path, got, want)
		}
	}
}
