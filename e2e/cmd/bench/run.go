package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/countproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

type options struct {
	plugin, referencePlugin                    string
	cycles, handshakes, preflights, bootCycles int
	// concurrent is how many machines each many-at-once set creates (-concurrent 100,200).
	concurrent       sizes
	preflightLatency time.Duration
	// livesOnly measures the machine lives' requests alone (-lives-only); concurrentOnly measures the cycles and
	// the many-at-once sets alone (-concurrent-only).
	livesOnly, concurrentOnly bool
}

// The stand-in's imitated latencies during the benchmark: a VM is "booted" (Running with an IP) after
// 3 × phase + ip. More workers than the default so the stand-in is not what 100 machines queue on.
var standInOpts = standin.Options{PhaseDelay: 50 * time.Millisecond, IPDelay: 200 * time.Millisecond, Workers: 16}

func simulatedBoot() time.Duration { return 3*standInOpts.PhaseDelay + standInOpts.IPDelay }

// namespace holds the benchmark's machines and nothing else, so what is left in it is theirs.
const namespace = "bench"

// bootNamespace holds the lifecycles with a slow boot: the stand-in's ip-delay knob on it makes each VM take
// bootTime from its VMI's creation to its address.
const bootNamespace = "bench-boot"

const bootTime = 3 * time.Second

func run(ctx context.Context, o options, out io.Writer) error {
	pluginDir, err := rmachine.PluginDir(o.plugin)
	if err != nil {
		return err
	}
	rancherMachine, err := rmachine.Find(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: starting the simulated Harvester")
	bed, err := testbed.Start(ctx, testbed.Options{StandIn: standInOpts})
	if err != nil {
		return err
	}
	defer bed.Stop()
	if _, err := bed.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	slow := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootNamespace,
		Annotations: map[string]string{standin.AnnotationIPDelay: (bootTime - 3*standInOpts.PhaseDelay).String()}}}
	if _, err := bed.Kube.CoreV1().Namespaces().Create(ctx, slow, metav1.CreateOptions{}); err != nil {
		return err
	}
	proxy, err := countproxy.Start(bed.AdminConfig())
	if err != nil {
		return err
	}
	defer proxy.Close()
	kubeconfig := proxy.Kubeconfig()
	work, err := ownedtemp.Dir("dmdh-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	script := filepath.Join(work, "install.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntrue\n"), 0o644); err != nil {
		return err
	}
	newCLI := func(store string) *rmachine.CLI {
		return &rmachine.CLI{Bin: rancherMachine, Store: filepath.Join(work, store), PluginDir: pluginDir,
			Env: []string{"HARVESTER_KUBECONFIG_CONTENT=" + base64.StdEncoding.EncodeToString(kubeconfig)}}
	}
	createArgsIn := func(ns string) func(name string) []string {
		return func(name string) []string {
			return []string{"create", "-d", "harvester", "--custom-install-script", script, "--harvester-vm-namespace", ns,
				"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "10", "--harvester-network-name", "default/vm-untag", name}
		}
	}
	createArgs := createArgsIn(namespace)

	var rep report
	if o.concurrentOnly {
		return measureConcurrentOnly(ctx, bed, proxy, newCLI, createArgsIn, o, &rep, out)
	}
	if err := measureLives(ctx, proxy, newCLI("lives"), pluginDir, kubeconfig, createArgsIn(bootNamespace), bootNamespace, work, o.bootCycles, &rep); err != nil {
		return err
	}
	if o.livesOnly {
		rep.printLives(out)
		return nil
	}
	if err := measureCycles(ctx, bed, proxy, newCLI("cycles"), createArgs, o.cycles, &rep); err != nil {
		return err
	}
	// The pre-flight of the same machine as the cycles', by the plugin and (when given) by the reference driver.
	machine := map[string]any{"harvester-vm-namespace": namespace, "harvester-image-name": "default/ubuntu-22.04",
		"harvester-disk-size": 10, "harvester-network-name": "default/vm-untag"}
	dirs := []string{pluginDir}
	if o.referencePlugin != "" {
		refDir, err := rmachine.PluginDir(o.referencePlugin)
		if err != nil {
			return err
		}
		dirs = append(dirs, refDir)
	}
	latencies := []time.Duration{0} // loopback, and with -preflight-latency when it is positive
	if o.preflightLatency > 0 {
		latencies = append(latencies, o.preflightLatency)
	}
	for _, latency := range latencies {
		fmt.Fprintf(os.Stderr, "bench: %d pre-flights of each of %d plugins, taking turns, %s added to each request\n", o.preflights, len(dirs), latency)
		proxy.SetLatency(latency)
		runs, err := measurePreflight(dirs, proxy, kubeconfig, machine, o.preflights)
		proxy.SetLatency(0)
		if err != nil {
			return err
		}
		rep.preflights = append(rep.preflights, preflightSet{latency: latency, runs: runs})
	}
	if err := measureHandshakes(pluginDir, o.handshakes, &rep); err != nil {
		return err
	}
	if err := measureMany(ctx, bed, proxy, newCLI, createArgsIn, o.concurrent, &rep); err != nil {
		return err
	}
	if info, err := os.Stat(filepath.Join(pluginDir, "docker-machine-driver-harvester")); err == nil {
		rep.binaryMB = float64(info.Size()) / 1e6
	}
	rep.print(out)
	return nil
}

// measureCycles creates and removes machines one after the other, timing ready detection and counting requests.
func measureCycles(ctx context.Context, bed *testbed.Bed, proxy *countproxy.Proxy, cli *rmachine.CLI,
	createArgs func(string) []string, cycles int, rep *report) error {
	fmt.Fprintf(os.Stderr, "bench: %d create + remove cycles\n", cycles)
	ipSeen := watchIPs(ctx, bed)
	for i := range cycles {
		name := fmt.Sprintf("cycle-%d", i)
		proxy.Take()
		var ready time.Time
		r := cli.Run(ctx, func(line string, at time.Time) bool {
			if ready.IsZero() && strings.Contains(line, "is running at") {
				ready = at
			}
			return false
		}, createArgs(name)...)
		if r.Err != nil {
			return fmt.Errorf("%s", r)
		}
		creates := proxy.Take()
		if r := cli.Run(ctx, nil, "rm", "-y", name); r.Err != nil {
			return fmt.Errorf("%s", r)
		}
		removes := proxy.Take()
		ip, ok := ipSeen(name)
		if !ok || ready.IsZero() {
			return fmt.Errorf("cycle %d: IP seen %v, ready line seen %v", i, ok, !ready.IsZero())
		}
		rep.readyLatency = append(rep.readyLatency, ready.Sub(ip))
		rep.createRequests = append(rep.createRequests, creates)
		rep.removeRequests = append(rep.removeRequests, removes)
	}
	return nil
}

// watchIPs watches the VMIs and remembers when each first showed an IP on nic-0: when the stand-in reported it.
func watchIPs(ctx context.Context, bed *testbed.Bed) func(name string) (time.Time, bool) {
	var mu sync.Mutex
	seen := map[string]time.Time{}
	w, err := bed.Virt.KubevirtV1().VirtualMachineInstances(namespace).Watch(ctx, metav1.ListOptions{})
	if err == nil {
		go func() {
			for ev := range w.ResultChan() {
				vmi, ok := ev.Object.(*kubevirtv1.VirtualMachineInstance)
				if !ok || ev.Type == watch.Deleted {
					continue
				}
				for _, iface := range vmi.Status.Interfaces {
					if iface.Name == "nic-0" && iface.IP != "" {
						mu.Lock()
						if _, done := seen[vmi.Name]; !done {
							seen[vmi.Name] = time.Now()
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	return func(name string) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		t, ok := seen[name]
		delete(seen, name) // the next cycle may reuse nothing, but keep the map small
		return t, ok
	}
}

// measureConcurrentOnly measures the cycles (one machine alone: its requests are the many-at-once sets'
// yardstick) and the many-at-once sets, and prints their rows (-concurrent-only).
func measureConcurrentOnly(ctx context.Context, bed *testbed.Bed, proxy *countproxy.Proxy, newCLI func(string) *rmachine.CLI,
	createArgsIn func(string) func(string) []string, o options, rep *report, out io.Writer) error {
	if err := measureCycles(ctx, bed, proxy, newCLI("cycles"), createArgsIn(namespace), o.cycles, rep); err != nil {
		return err
	}
	if err := measureMany(ctx, bed, proxy, newCLI, createArgsIn, o.concurrent, rep); err != nil {
		return err
	}
	rep.header(out)
	one := lifeRequests(rep.createRequests, rep.removeRequests)
	fmt.Fprintf(out, "| API requests per create + remove, one machine alone (%d cycles; median, by verb) | %d (%s) | |\n",
		len(one), medianTotal(one), verbs(one))
	rep.printMany(out)
	return nil
}

// report holds the figures and prints them.
type report struct {
	readyLatency                   []time.Duration
	createRequests, removeRequests []map[string]int
	lives                          []lifeSet
	preflights                     []preflightSet
	handshake                      []time.Duration
	rssMB                          []float64
	many                           []manySet
	binaryMB                       float64
}

func (r *report) print(out io.Writer) {
	r.header(out)
	fmt.Fprintf(out, "| Ready detection: VMI reports its IP → driver reports the machine running (%d creates) | median %s, p95 %s | polls every 5 s: 2.5 s on average, up to 5 s |\n",
		len(r.readyLatency), ms(percentile(r.readyLatency, 50)), ms(percentile(r.readyLatency, 95)))
	fmt.Fprintf(out, "| API requests per create (median; by verb) | %d (%s) | a GET of the VM and of the VMI every 5 s while it boots |\n",
		medianTotal(r.createRequests), verbs(r.createRequests))
	fmt.Fprintf(out, "| API requests per remove (median; by verb) | %d (%s) | |\n", medianTotal(r.removeRequests), verbs(r.removeRequests))
	for _, set := range r.lives {
		set.print(out)
	}
	for _, set := range r.preflights {
		set.print(out)
	}
	fmt.Fprintf(out, "| Plugin start: RPC handshake (%d starts) | median %s | |\n", len(r.handshake), ms(percentile(r.handshake, 50)))
	fmt.Fprintf(out, "| Plugin resident memory after the handshake | %.1f MB | |\n", medianFloat(r.rssMB))
	fmt.Fprintf(out, "| Plugin binary (stripped) | %.1f MB | 69.7 MB |\n", r.binaryMB)
	r.printMany(out)
}

// printMany writes the rows of the many-at-once sets, then what failed in them.
func (r *report) printMany(out io.Writer) {
	one := lifeRequests(r.createRequests, r.removeRequests)
	for _, set := range r.many {
		set.print(out, one)
	}
	for _, set := range r.many {
		set.printFailures(out)
	}
}

// header writes the line that says where and when, and the table's head.
func (r *report) header(out io.Writer) {
	fmt.Fprintf(out, "Measured %s on %s (%d CPUs), %s; the stand-in boots a VM in %s.\n\n",
		time.Now().Format("2006-01-02"), cpuModel(), runtime.NumCPU(), runtime.Version(), simulatedBoot())
	fmt.Fprintln(out, "| Measure | This driver | Reference driver (by its design, or measured where a figure is given) |")
	fmt.Fprintln(out, "|---|---|---|")
}

// printLives writes the table of the machine lives alone (-lives-only).
func (r *report) printLives(out io.Writer) {
	r.header(out)
	for _, set := range r.lives {
		set.print(out)
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func medianFloat(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	return s[(len(s)-1)/2]
}

func medianTotal(counts []map[string]int) int {
	ds := make([]time.Duration, len(counts))
	for i, c := range counts {
		ds[i] = time.Duration(countproxy.Total(c))
	}
	return int(percentile(ds, 50))
}

// verbs renders the median count per verb.
func verbs(counts []map[string]int) string {
	all := map[string]bool{}
	for _, c := range counts {
		for v := range c {
			all[v] = true
		}
	}
	var parts []string
	for v := range all {
		ds := make([]time.Duration, len(counts))
		for i, c := range counts {
			ds[i] = time.Duration(c[v])
		}
		parts = append(parts, fmt.Sprintf("%s %d", v, int(percentile(ds, 50))))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) string   { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
func ms1(d time.Duration) string  { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
