package harvester

import (
	"os/exec"
	"strings"
	"testing"
)

// The driver is three layers, each importing only the ones below it: harvester/config (flags to a validated
// Config), harvester/objects (pure objects), and package harvester (the lifecycle) with its client and allocation
// layers under harvester/internal. This test keeps the layers from folding back: it reads what each package
// really depends on, directly or not, from `go list`.
func TestLayersImportOnlyDownward(t *testing.T) {
	const mod = "github.com/harvester/docker-machine-driver-harvester/"
	lifecycle := []string{mod + "harvester", mod + "harvester/internal/kube", mod + "harvester/ippool", "k8s.io/client-go/dynamic", "k8s.io/client-go/kubernetes"}
	rules := []struct {
		pkg       string
		forbidden []string // in its dependencies, direct or not
		direct    []string // among its direct imports
	}{
		{pkg: mod + "harvester/config", forbidden: append([]string{mod + "harvester/objects"}, lifecycle...)},
		// Pure: no client, and no randomness (what a create draws comes in as an argument).
		{pkg: mod + "harvester/objects", forbidden: lifecycle, direct: []string{"crypto/rand", "math/rand", "math/rand/v2"}},
		{pkg: mod + "harvester/internal/lists", forbidden: []string{mod + "harvester/config", mod + "harvester/objects"}},
		// The driver's name only: it translates flag names, knows no flag table and no lifecycle.
		{pkg: mod + "harvester/identity", forbidden: append([]string{mod + "harvester/config", mod + "harvester/objects"}, lifecycle...)},
	}
	for _, r := range rules {
		deps := goList(t, "-deps", "-f", "{{.ImportPath}}", r.pkg)
		for _, f := range r.forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s, a layer above it", r.pkg, f)
			}
		}
		imports := goList(t, "-f", `{{join .Imports "\n"}}`, r.pkg)
		for _, f := range r.direct {
			if imports[f] {
				t.Errorf("%s imports %s: its functions must stay pure", r.pkg, f)
			}
		}
	}
}

// goList runs `go list args…` and returns the lines it prints.
func goList(t *testing.T, args ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	return lines
}
