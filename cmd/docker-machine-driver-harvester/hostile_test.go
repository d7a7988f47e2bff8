package main

import (
	"bytes"
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// hostileRender is the worst input of one kind, given to the plugin's render verb, and the flag the refusal names.
type hostileRender struct {
	name string
	args []string
	flag string
}

// hostileRenders are the worst inputs of each kind: file flags that block or never end, user data that inflates
// far past its size, numbers past what their objects hold, JSON nested past reason.
func hostileRenders(tb testing.TB) []hostileRender {
	fifo, sock := hostile.SpecialFiles(tb)
	deep := hostile.DeepJSON(20000)
	return []hostileRender{
		{"cloud-config FIFO", []string{"--harvester-cloud-config", fifo}, "harvester-cloud-config"},
		{"cloud-config socket", []string{"--harvester-cloud-config", sock}, "harvester-cloud-config"},
		{"cloud-config /dev/zero", []string{"--harvester-cloud-config", "/dev/zero"}, "harvester-cloud-config"},
		{"private key FIFO", []string{"--harvester-ssh-private-key-path", fifo}, "harvester-ssh-private-key-path"},
		{"private key /dev/zero", []string{"--harvester-ssh-private-key-path", "/dev/zero"}, "harvester-ssh-private-key-path"},
		{"250 gzip parts", []string{"--harvester-user-data", hostile.GzipParts(250, 40<<10)}, "harvester-user-data"},
		{"cores past uint32", []string{"--harvester-cpu-count", "1099511627776"}, "harvester-cpu-count"},
		{"memory past int64 bytes", []string{"--harvester-memory-size", "1099511627776"}, "harvester-memory-size"},
		{"timeout past a Duration", []string{"--harvester-create-timeout", "1152921504606846976"}, "harvester-create-timeout"},
		{"JSON size past 2^53", []string{"--harvester-disk-info", `{"disks":[{"imageName":"a","size":9007199254740993}]}`}, "harvester-disk-info"},
		{"deep JSON", []string{"--harvester-vm-affinity", deep}, "harvester-vm-affinity"},
		{"deep YAML", []string{"--harvester-user-data", "#cloud-config\na: " + strings.Repeat("[", 20000)}, "harvester-user-data"},
		{"VM patch FIFO", []string{"--harvester-vm-patch", fifo}, "harvester-vm-patch"},
		{"VM patch doubling the VM", []string{"--harvester-vm-patch", hostile.DoublingPatch(config.MaxVMPatchOperations)}, "harvester-vm-patch"},
		{"VM patch growing, then reading the VM", []string{"--harvester-vm-patch", hostile.GrowThenReadPatch(8, config.MaxVMPatchOperations)}, "harvester-vm-patch"},
		// resource.ParseQuantity takes minutes and hundreds of MB to round either to 1n.
		{"VM patch quantity 1e-1000000000", []string{"--harvester-vm-patch", `{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"1e-1000000000"}}}}}}}`}, "harvester-vm-patch"},
		{"VM patch quantity as a JSON number", []string{"--harvester-vm-patch", `{"spec":{"template":{"spec":{"domain":{"memory":{"guest":1e-1000000000}}}}}}`}, "harvester-vm-patch"},
	}
}

// renderHostile runs the plugin's render verb on one hostile input and returns its exit code, its stderr, how
// long it ran and its peak resident memory. The plugin is killed after 30 s: an input that hangs it fails.
func renderHostile(tb testing.TB, h hostileRender) (code int, stderr string, took time.Duration, peakRSS int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"render", "--machine-name", "m1", "--harvester-image-name", "default/ubuntu",
		"--harvester-disk-size", "40", "--harvester-network-name", "default/vlan1"}, h.args...)
	cmd, peak := meteredPlugin(ctx, tb, args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		tb.Fatalf("%s: the plugin still ran after 30 s: the input hangs it", h.name)
	}
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		tb.Fatal(err)
	}
	return code, errOut.String(), took, peak()
}

// No input hangs the plugin or grows it past 100 MB: the worst of each kind is refused, naming its flag.
func TestHostileInputNeitherHangsNorGrowsThePlugin(t *testing.T) {
	const maxRSS = 100 << 20
	for _, h := range hostileRenders(t) {
		code, stderr, _, rss := renderHostile(t, h)
		if code != 1 || !strings.Contains(stderr, "--"+h.flag+": ") {
			t.Errorf("%s: want exit 1 and a problem of --%s, got exit %d:\n%s", h.name, h.flag, code, stderr)
		}
		if rss > maxRSS {
			t.Errorf("%s: the plugin grew to %d MB, more than %d MB", h.name, rss>>20, maxRSS>>20)
		}
	}
}

// BenchmarkHostileInput reports, for the worst input of each kind, how long the plugin takes to refuse it and its
// peak resident memory meanwhile (peak-RSS-MB; a render of a valid machine is the baseline).
func BenchmarkHostileInput(b *testing.B) {
	cases := append([]hostileRender{{name: "valid machine (baseline)"}}, hostileRenders(b)...)
	for _, h := range cases {
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			var peak int64
			for i := 0; i < b.N; i++ {
				_, _, _, rss := renderHostile(b, h)
				peak = max(peak, rss)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		})
	}
}

// The meter reads the plugin's own peak, not the test binary's: with 150 MB touched here, a plugin that refuses a
// hostile input at once stays far below it. Started straight from this process, the plugin's ru_maxrss carried
// this process's peak (testdata/peakrss), and the memory bounds above failed in a full -race run.
func TestPeakRSSIsThePluginsOwn(t *testing.T) {
	ballast := make([]byte, 150<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	_, _, _, rss := renderHostile(t, hostileRender{name: "valid machine"})
	if rss == 0 || rss >= 100<<20 {
		t.Errorf("the plugin's peak resident memory reads %d MB with 150 MB touched by the test: want the plugin's own, above 0 and below 100 MB", rss>>20)
	}
	runtime.KeepAlive(ballast)
}
