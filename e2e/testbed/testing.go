package testbed

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// StartT starts a bed for one test and stops it when the test ends, printing the servers' log tails if the
// test failed. It skips under -short, and when the control-plane binaries cannot be had (see RequireControlPlane).
func StartT(t testing.TB, opts Options) *Bed {
	t.Helper()
	RequireControlPlane(t)
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	b, err := Start(context.Background(), opts) // Start bounds the servers' start-up itself
	if err != nil {
		t.Fatalf("start the test bed: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(b.Logs(40))
		}
		b.Stop()
	})
	return b
}

var shared struct {
	once sync.Once
	opts Options
	mu   sync.Mutex // guards bed, which a signal may stop while tests run
	bed  *Bed
	err  error
}

// Main runs a test package with one bed shared by its tests (see Shared), stops it after the last test, and then
// runs atExit (the package's own temporary files, say). Call it from TestMain:
// func TestMain(m *testing.M) { testbed.Main(m, testbed.Options{}) }.
//
// An interrupt or a termination (Ctrl-C, a CI job cancelled) stops the bed and runs atExit too before the process
// exits, so no server, guest or temporary file outlives the tests. (go test's own -timeout panics without
// cleanup: the servers and guests still die with the process, and the next run removes their directories, see
// package ownedtemp.)
func Main(m *testing.M, opts Options, atExit ...func()) {
	shared.opts = opts
	var once sync.Once
	cleanup := func(failed bool) {
		once.Do(func() {
			shared.mu.Lock()
			bed := shared.bed
			shared.mu.Unlock()
			if bed != nil {
				if failed {
					fmt.Fprintln(os.Stderr, bed.Logs(40))
				}
				bed.Stop()
			}
			for _, f := range atExit {
				f()
			}
		})
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "testbed: %v: stopping the test bed\n", sig)
		cleanup(false)
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(signals)
	cleanup(code != 0)
	os.Exit(code)
}

// Shared returns the package's bed, starting it on first use (TestMain must call Main). Tests sharing it must
// not disturb each other: give each its own namespace (Namespace) and do not stop or restart shared parts.
func Shared(t testing.TB) *Bed {
	t.Helper()
	RequireControlPlane(t)
	shared.once.Do(func() {
		opts := shared.opts
		if opts.Logf == nil {
			opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		}
		bed, err := Start(context.Background(), opts) // Start bounds the servers' start-up itself
		shared.mu.Lock()
		shared.bed, shared.err = bed, err
		shared.mu.Unlock()
	})
	if shared.err != nil {
		t.Fatalf("start the shared test bed: %v", shared.err)
	}
	return shared.bed
}

// Namespace creates a namespace named after the test and deletes it when the test ends (the namespace
// controller then deletes what is left in it).
func (b *Bed) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: base + "-"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := b.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a namespace for the test: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = b.Kube.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{})
	})
	return created.Name
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// RequireControlPlane skips the test under -short, and when the control-plane binaries cannot be had (fails it
// instead under `make test`: testenv.Unavailable). StartT and Shared call it.
func RequireControlPlane(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real control plane (skipped with -short)")
	}
	if _, err := repo.ToolDir(context.Background(), "controlplane", controlplane.BinEnv); err != nil {
		testenv.Unavailable(t, "control-plane binaries", err)
	}
}

// ConflictBackoff is how long tests retry an update of a VM on conflicts (retry.RetryOnConflict): KubeVirt's
// controller and the stand-in write a new VM (finalizers, status) several times in its first seconds, more often
// than client-go's retry.DefaultRetry (5 tries within 50 ms) outlasts. It allows about 10 s.
var ConflictBackoff = wait.Backoff{Steps: 40, Duration: 50 * time.Millisecond, Factor: 1.2, Jitter: 0.1, Cap: 500 * time.Millisecond}
