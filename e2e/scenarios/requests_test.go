package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// lifeBudget is the most API requests a machine's life may make: create, ip and rm.
const lifeBudget = 24

// countedNamespace is a namespace of the shared bed, and a proxy to its API server that counts the requests of
// the plugins that talk to it (newCLI(t, proxy.Kubeconfig())), for a test alone.
func countedNamespace(t *testing.T) (*testbed.Bed, string, *countproxy.Proxy) {
	t.Helper()
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	proxy, err := countproxy.Start(b.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	return b, ns, proxy
}

// A machine's life as rancher-machine drives the plugin — `create` (PreCreateCheck, Create, GetState), `ip`
// (GetIP) and `rm` (Remove), each command a plugin of its own loaded from the saved state — stays within its
// budget of API requests on the simulated Harvester, where the real API server, KubeVirt's controllers and the
// garbage collector answer. A proxy that only this test's plugin talks to counts them; package harvester's
// TestMachineLifeRequests pins them call by call.
func TestMachineLifeRequests(t *testing.T) {
	b, ns, proxy := countedNamespace(t)
	cli := newCLI(t, proxy.Kubeconfig())
	name := "life"
	proxy.Take()
	life := 0
	var steps []string
	for _, args := range [][]string{append(createArgs(t, ns), name), {"ip", name}, {"rm", "-y", name}} {
		quiet(t, cli.must(args...))
		got := proxy.Take()
		life += countproxy.Total(got)
		steps = append(steps, fmt.Sprintf("%s %d (%s)", args[0], countproxy.Total(got), byVerb(got)))
	}
	if life > lifeBudget {
		t.Errorf("a machine's life made %d API requests, more than its budget of %d: %s", life, lifeBudget, strings.Join(steps, "; "))
	} else {
		t.Logf("a machine's life made %d API requests: %s", life, strings.Join(steps, "; "))
	}
	nothingLeft(t, b, ns)
}

// byVerb words request counts by verb, in the verbs' order.
func byVerb(counts map[string]int) string { return wordByVerb(counts, strconv.Itoa) }

// wordByVerb words each verb's count with word, in the verbs' order.
func wordByVerb(counts map[string]int, word func(int) string) string {
	var parts []string
	for _, verb := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, verb+" "+word(counts[verb]))
	}
	return strings.Join(parts, ", ")
}
