package scenarios

import (
	"fmt"
	"sync"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
)

// manyAtOnce is how many machines TestManyMachinesRequests creates at once. `make bench` measures 100 and 200 (see
// docs/performance.md); 20 is what CI's 2 cores afford in seconds beside the other scenarios, and enough to
// meet what crowds bring: the API server, the webhooks and KubeVirt's controller busy with many VMs at once,
// KubeVirt's controller writing a VM while its rm updates it (a conflict, then a read and a write again).
const manyAtOnce = 20

// manyMargin is how many more API requests per machine many machines at once may make than one machine alone.
const manyMargin = 0.05

// Twenty machines created at once through rancher-machine, then removed at once, make per machine at most 5 %
// more API requests than one machine created and removed alone in the same namespace beforehand: nothing in the
// driver's requests grows with the machines around it (no list of them all, no poll that lasts as long as the
// crowd keeps the API server busy, retries only on what a crowd really causes). A proxy that only this test's
// plugins talk to counts them. Every create and rm succeeds, and nothing is left.
func TestManyMachinesRequests(t *testing.T) {
	b, ns, proxy := countedNamespace(t)
	args := createArgs(t, ns)
	create := func(name string) []string { return append(append([]string{}, args...), name) }

	alone := newCLI(t, proxy.Kubeconfig())
	proxy.Take()
	quiet(t, alone.must(create("alone")...))
	alone.must("rm", "-y", "alone")
	one := proxy.Take()

	clis := make([]*machineCLI, manyAtOnce)
	for i := range clis {
		clis[i] = newCLI(t, proxy.Kubeconfig())
	}
	atOnce := func(what string, args func(i int) []string) {
		var wg sync.WaitGroup
		results := make([]rmachine.Result, manyAtOnce)
		for i := range clis {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = clis[i].run(args(i)...)
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.Err != nil {
				t.Errorf("%s of machine %d of %d at once: %s", what, i, manyAtOnce, r)
			}
		}
	}
	atOnce("create", func(i int) []string { return create(fmt.Sprintf("m%d", i)) })
	atOnce("rm", func(i int) []string { return []string{"rm", "-y", fmt.Sprintf("m%d", i)} })
	many := proxy.Take()
	nothingLeft(t, b, ns)
	if t.Failed() {
		return
	}

	perMachine := float64(countproxy.Total(many)) / manyAtOnce
	bound := float64(countproxy.Total(one)) * (1 + manyMargin)
	figures := fmt.Sprintf("%d machines at once made %.2f API requests per machine (%s), one machine alone %d (%s)",
		manyAtOnce, perMachine, perMachineByVerb(many, manyAtOnce), countproxy.Total(one), byVerb(one))
	if perMachine > bound {
		t.Errorf("%s: more than %.0f %% above", figures, manyMargin*100)
	} else {
		t.Log(figures)
	}
}

// perMachineByVerb words request counts divided by n, by verb in the verbs' order.
func perMachineByVerb(counts map[string]int, n int) string {
	return wordByVerb(counts, func(c int) string { return fmt.Sprintf("%.2f", float64(c)/float64(n)) })
}
