package scenarios

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

var ipPoolsResource = schema.GroupVersionResource{Group: "loadbalancer.harvesterhci.io", Version: "v1beta1", Resource: "ippools"}

// createLBPool creates a Harvester load-balancer IPPool (cluster-scoped) for network with one range, serving every
// namespace, and deletes it when the test ends.
func createLBPool(t *testing.T, b *testbed.Bed, name, network, subnet, start, end string) {
	t.Helper()
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "loadbalancer.harvesterhci.io/v1beta1", "kind": "IPPool",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"ranges":   []any{map[string]any{"subnet": subnet, "rangeStart": start, "rangeEnd": end}},
			"selector": map[string]any{"network": network, "scope": []any{map[string]any{"project": "*", "namespace": "*", "guestCluster": "*"}}},
		},
	}}
	if _, err := b.Dynamic.Resource(ipPoolsResource).Create(context.Background(), pool, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Dynamic.Resource(ipPoolsResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete load-balancer IP pool %s: %v", name, err)
		}
	})
}

// A --harvester-ip-pool range that overlaps a load-balancer IP pool of the machine's network is refused in
// pre-flight, by a create through rancher-machine (nothing is made, no address allocated) and by check, naming
// the pool and the overlap; the pools are read with one list from the API server's watch cache. A pool on another
// network that covers the whole range refuses nothing. (The test's name is short: its namespace is made from it,
// and a run of 32 letters and digits in a message is hidden as a possible token, see config.Redact.)
func TestLBPoolOverlap(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	createVMNetwork(t, b, ns, "lb-net")
	createLBPool(t, b, ns+"-lb", ns+"/lb-net", "10.88.0.0/24", "10.88.0.50", "10.88.0.99")
	createLBPool(t, b, ns+"-elsewhere", ns+"/other-net", "10.88.0.0/24", "", "")

	var (
		mu    sync.Mutex
		reads []string
	)
	kubeconfig, _ := holdingProxy(t, b.AdminConfig(), func(r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/ippools") {
			mu.Lock()
			reads = append(reads, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
			mu.Unlock()
		}
		return false
	})
	pool := func(rng string) []string {
		return []string{"--harvester-network-name", ns + "/lb-net", "--harvester-ip-pool", rng, "--harvester-ip-pool-gateway", "10.88.0.1"}
	}
	want := "--harvester-ip-pool: 10.88.0.10-10.88.0.59 overlaps load-balancer IP pool " + ns + "-lb at 10.88.0.50-10.88.0.59 " +
		"(its range 10.88.0.50-10.88.0.99 of subnet 10.88.0.0/24; it serves network " + ns + "/lb-net)"

	cli := newCLI(t, kubeconfig)
	r := cli.run(append(createArgs(t, ns, pool("10.88.0.10-10.88.0.59/24")...), "m1")...)
	if r.Err == nil {
		t.Fatalf("create succeeded: %s", r)
	}
	t.Logf("what the user sees:\n%s", r.Output)
	if !strings.Contains(r.Output, "cannot create the machine on Harvester") || !strings.Contains(r.Output, want) {
		t.Errorf("the pre-flight's error does not say %q", want)
	}
	if strings.Contains(r.Output, "Creating VM") {
		t.Errorf("the create went past the pre-flight")
	}
	if held := ipAllocations(t, b, ns); len(held) > 0 {
		t.Errorf("addresses allocated: %v", held)
	}
	nothingLeft(t, b, ns)
	mu.Lock()
	if len(reads) != 1 || !strings.HasPrefix(reads[0], "GET /apis/loadbalancer.harvesterhci.io/v1beta1/ippools?") || !strings.Contains(reads[0], "resourceVersion=0") {
		t.Errorf("the create's requests for pools: %v, want one list with resourceVersion=0", reads)
	}
	mu.Unlock()

	args := append(checkArgs(ns), pool("10.88.0.10-10.88.0.59/24")...)
	if out, code := runCheck(t, kubeconfig, args...); code != 1 || !strings.Contains(out, "problem  load-balancer pools   "+want) {
		t.Errorf("check of the overlapping range: exit %d, want 1 and the line %q", code, "problem  load-balancer pools   "+want)
	}
	// Only the pool of another network covers 10.88.0.10-10.88.0.49.
	args = append(checkArgs(ns), pool("10.88.0.10-10.88.0.49/24")...)
	plan := "of the address plan: 10.88.0.10-10.88.0.49/24 on network " + ns + "/lb-net\n" // the line names what it judged
	if out, code := runCheck(t, kubeconfig, args...); code != 0 || !strings.Contains(out, "ok       load-balancer pools   "+plan) || !strings.Contains(out, "ok       IP pool               "+plan) {
		t.Errorf("check of a range only another network's pool covers: exit %d, want 0 and ok lines for the IP pool and the load-balancer pools", code)
	}
}
