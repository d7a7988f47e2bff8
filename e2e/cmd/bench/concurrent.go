package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// manySet is one measure of n machines created at once through rancher-machine, then removed at once: in a
// namespace of its own, so what is left there is its machines'.
type manySet struct {
	n                      int
	created, removed       int
	createWall, removeWall time.Duration
	// overhead is each created machine's create time less the simulated boot; removal each removed machine's rm.
	overhead, removal []time.Duration
	// loadStart is the 1-minute load average when the creates started; loadCreate and loadRemove the highest seen
	// while the creates and the removes ran (loadavg).
	loadStart, loadCreate, loadRemove float64
	// requests is what all n plugins asked of the API server, creates and removes, by verb.
	requests map[string]int
	left     []string
	failures []string
}

// sizes is the -concurrent flag: how many machines each set creates at once, in order.
type sizes []int

func (s *sizes) String() string {
	var parts []string
	for _, n := range *s {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (s *sizes) Set(v string) error {
	var out sizes
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 || n > 1000 {
			return fmt.Errorf("%q: want a comma-separated list of machine counts from 0 to 1000, such as 100,200", v)
		}
		if n > 0 {
			out = append(out, n)
		}
	}
	*s = out
	return nil
}

// measureMany measures a many-at-once set of each size, in turn.
func measureMany(ctx context.Context, bed *testbed.Bed, proxy *countproxy.Proxy, newCLI func(string) *rmachine.CLI,
	createArgsIn func(ns string) func(string) []string, ns sizes, rep *report) error {
	for _, n := range ns {
		set, err := measureConcurrent(ctx, bed, proxy, newCLI, createArgsIn, n)
		rep.many = append(rep.many, set)
		if err != nil {
			return err
		}
	}
	return nil
}

// measureConcurrent creates n machines at once, then removes them at once, in namespace ns, counting the
// plugins' requests through proxy (which nothing else uses meanwhile).
func measureConcurrent(ctx context.Context, bed *testbed.Bed, proxy *countproxy.Proxy, newCLI func(string) *rmachine.CLI,
	createArgsIn func(ns string) func(string) []string, n int) (manySet, error) {
	fmt.Fprintf(os.Stderr, "bench: %d machines at once\n", n)
	set := manySet{n: n}
	ns := fmt.Sprintf("bench-many-%d", n)
	if _, err := bed.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return set, err
	}
	createArgs := createArgsIn(ns)
	durations := make([]time.Duration, n)
	var mu sync.Mutex
	// each runs args(i) for every machine at once and returns how many succeeded.
	each := func(args func(i int) []string) int {
		var wg sync.WaitGroup
		ok := 0
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := newCLI(fmt.Sprintf("%s/m%d", ns, i)).Run(ctx, nil, args(i)...)
				mu.Lock()
				defer mu.Unlock()
				if r.Err != nil {
					set.failures = append(set.failures, r.String())
					return
				}
				ok++
				durations[i] = r.Duration
			}()
		}
		wg.Wait()
		return ok
	}
	proxy.Take()
	set.loadStart = loadAverage()
	highest := watchLoad()
	start := time.Now()
	set.created = each(func(i int) []string { return createArgs(fmt.Sprintf("many-%d", i)) })
	set.createWall = time.Since(start)
	set.loadCreate = highest()
	for i, d := range durations {
		if d > 0 {
			set.overhead = append(set.overhead, d-simulatedBoot())
		}
		durations[i] = 0
	}
	highest = watchLoad()
	start = time.Now()
	set.removed = each(func(i int) []string { return []string{"rm", "-y", fmt.Sprintf("many-%d", i)} })
	set.removeWall = time.Since(start)
	set.loadRemove = highest()
	for _, d := range durations {
		if d > 0 {
			set.removal = append(set.removal, d)
		}
	}
	set.requests = proxy.Take()
	left, err := bed.Leftovers(ctx, ns, 30*time.Second)
	set.left = left
	return set, err
}

// print writes the set's rows: the machines created and removed, the driver's overhead, the requests per machine
// beside one machine's (a create and an rm one after the other, one, the cycles' median) and what was left.
func (s manySet) print(out io.Writer, one []map[string]int) {
	fmt.Fprintf(out, "| %d machines created at once: succeeded | created %d of %d in %s, removed %d of %d in %s | |\n",
		s.n, s.created, s.n, s.createWall.Round(100*time.Millisecond), s.removed, s.n, s.removeWall.Round(100*time.Millisecond))
	fmt.Fprintf(out, "| … driver overhead per machine (create time − simulated boot) | p50 %s, p95 %s | |\n",
		secs(percentile(s.overhead, 50)), secs(percentile(s.overhead, 95)))
	fmt.Fprintf(out, "| … remove time per machine (rm) | p50 %s, p95 %s | |\n",
		secs(percentile(s.removal, 50)), secs(percentile(s.removal, 95)))
	perMachine := float64(countproxy.Total(s.requests)) / float64(s.n)
	vsOne := "no machine alone measured (-cycles 0)"
	if len(one) > 0 {
		base := medianTotal(one)
		vsOne = fmt.Sprintf("%.3f × one machine's %d (%s)", perMachine/float64(base), base, verbs(one))
	}
	fmt.Fprintf(out, "| … API requests per machine, create + rm (all %d plugins' ÷ %d; by verb) | %.2f (%s); %s | |\n",
		s.n, s.n, perMachine, perVerb(s.requests, s.n), vsOne)
	fmt.Fprintf(out, "| … machine load (1-minute load average, %d CPUs) | %.1f at the start; highest %.1f while creating, %.1f while removing | |\n",
		runtime.NumCPU(), s.loadStart, s.loadCreate, s.loadRemove)
	fmt.Fprintf(out, "| … objects left behind after removing them | %d | |\n", len(s.left))
}

// printFailures writes what failed and what was left, after the table.
func (s manySet) printFailures(out io.Writer) {
	for _, f := range s.failures {
		fmt.Fprintf(out, "\nfailure (%d at once): %s\n", s.n, f)
	}
	if len(s.left) > 0 {
		fmt.Fprintf(out, "\nleft behind 30 s after the last of %d rm: %s\n", s.n, strings.Join(s.left, ", "))
	}
}

// perVerb words counts divided by n, by verb in the verbs' order.
func perVerb(counts map[string]int, n int) string {
	var parts []string
	for v, c := range counts {
		parts = append(parts, fmt.Sprintf("%s %.2f", v, float64(c)/float64(n)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// lifeRequests adds each cycle's create and remove: one machine's requests, created and removed alone.
func lifeRequests(creates, removes []map[string]int) []map[string]int {
	var out []map[string]int
	for i := range min(len(creates), len(removes)) {
		sum := map[string]int{}
		for _, m := range []map[string]int{creates[i], removes[i]} {
			for v, c := range m {
				sum[v] += c
			}
		}
		out = append(out, sum)
	}
	return out
}
