package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hostileCluster is a Harvester API that answers the pre-flight's reads with numbers of the worst kind: the
// namespace exists, and quota, the machine's VM or the hosts carry the amounts given; every other read is a 404.
type hostileCluster struct {
	name         string
	quota        string // a quota's resource, hard and used amounts: "resource=hard/used"
	vmMemory     string // the memory limit of a VM of the machine's name, "" for none
	args         []string
	line, reason string // what check's stdout must say
}

func hostileClusters() []hostileCluster {
	return []hostileCluster{
		{name: "quota of 1e-1000000000", quota: "limits.memory=1e-1000000000/0", line: "problem  quota", reason: `ResourceQuota default/hostile: spec.hard[limits.memory] "1e-1000000000" has a decimal exponent beyond ±99`},
		{name: "quota of 1e1000000000, 1Gi used", quota: "limits.memory=1e1000000000/1Gi", line: "problem  quota", reason: `ResourceQuota default/hostile: spec.hard[limits.memory] "1e1000000000" has a decimal exponent beyond ±99`},
		{name: "quota of 100E", quota: "limits.memory=100E/0", line: "skipped  quota", reason: "resource quota hostile: status.hard[limits.memory] 100E is beyond what a Kubernetes quantity holds"},
		{name: "VM of 1e-1000000000 memory", vmMemory: "1e-1000000000", line: "problem  machine name", reason: `VirtualMachine default/m1: spec.template.spec.domain.resources.limits[memory] "1e-1000000000"`},
		// Harvester's default overcommit-config (memory 150): 85899346 GiB × 100 wrapped in an int64.
		{name: "memory request past int64", quota: "requests.memory=1Gi/0", args: []string{"--harvester-memory-size", "85899346"}, line: "problem  quota",
			reason: "--harvester-memory-size: resource quota hostile in namespace default: requests.memory has 1Gi free (0 of 1Gi used), the machine needs 58640620202Mi (its memory request: 85899346Gi × 100 / overcommit-config memory 150"},
	}
}

// serve is h's API.
func (h hostileCluster) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api/v1/namespaces/default":
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	case r.URL.Path == "/api/v1/namespaces/default/resourcequotas" && h.quota != "":
		res, amounts, _ := strings.Cut(h.quota, "=")
		hard, used, _ := strings.Cut(amounts, "/")
		fmt.Fprintf(w, `{"apiVersion":"v1","kind":"ResourceQuotaList","metadata":{},"items":[{"metadata":{"name":"hostile","namespace":"default"},
			"spec":{"hard":{%[1]q:%[2]q}},"status":{"hard":{%[1]q:%[2]q},"used":{%[1]q:%[3]q}}}]}`, res, hard, used)
	case r.URL.Path == "/apis/harvesterhci.io/v1beta1/settings/overcommit-config":
		fmt.Fprint(w, `{"apiVersion":"harvesterhci.io/v1beta1","kind":"Setting","metadata":{"name":"overcommit-config"},"default":"{\"cpu\":1000,\"memory\":150,\"storage\":100}"}`)
	case r.URL.Path == "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/m1" && h.vmMemory != "":
		fmt.Fprintf(w, `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"m1","namespace":"default"},
			"spec":{"template":{"spec":{"domain":{"devices":{},"resources":{"limits":{"memory":%q}}}}}}}`, h.vmMemory)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}`)
	}
}

// checkHostile runs check against h's API; the plugin is killed after 30 s (runPlugin), so that an amount that
// makes it compute without bound fails instead of hanging the test.
func checkHostile(t testing.TB, h hostileCluster) pluginRun {
	srv := newListener(t, h.serve)
	env := []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(srv.URL, "token: abc", ", insecure-skip-tls-verify: true")}
	return runPlugin(t, 30*time.Second, env, append(append([]string{}, checkArgs...), h.args...)...)
}

// No number Harvester sends makes check compute without bound or wrap: each of the worst kind is refused or
// skipped, named with its object and field, and the plugin stays under 100 MB.
func TestHostileClusterNumbersNeitherHangNorGrowThePlugin(t *testing.T) {
	const maxRSS = 100 << 20
	for _, h := range hostileClusters() {
		t.Run(h.name, func(t *testing.T) {
			p := checkHostile(t, h)
			if p.code != 1 || !strings.Contains(p.stdout, h.line) || !strings.Contains(p.stdout, h.reason) {
				t.Errorf("want exit 1 and %q on a %q line, got exit %d:\n%s%s", h.reason, h.line, p.code, p.stdout, p.stderr)
			}
			if p.peakRSS > maxRSS {
				t.Errorf("the plugin grew to %d MB, more than %d MB", p.peakRSS>>20, maxRSS>>20)
			}
		})
	}
}

// BenchmarkHostileInputFromHarvester reports, for the worst numbers Harvester can send, how long check takes to
// refuse them and the plugin's peak resident memory meanwhile (make bench runs it with the other HostileInput
// benchmarks).
func BenchmarkHostileInputFromHarvester(b *testing.B) {
	for _, h := range hostileClusters() {
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			var peak int64
			for i := 0; i < b.N; i++ {
				p := checkHostile(b, h)
				if !strings.Contains(p.stdout, h.reason) {
					b.Fatalf("check did not refuse it:\n%s%s", p.stdout, p.stderr)
				}
				peak = max(peak, p.peakRSS)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		})
	}
}
