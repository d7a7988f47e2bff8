package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"kubevirt.io/client-go/kubevirt"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The program announces its kubeconfig and readiness on stdout, serves the simulated Harvester with it, and
// removes everything when its context ends.
func TestRun(t *testing.T) {
	testbed.RequireControlPlane(t)
	kcPath := t.TempDir() + "/sim.kubeconfig"
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", kcPath, "-ip-delay", "10ms"}, w, testWriter{t})
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
	}
	go io.Copy(io.Discard, out)
	if len(got) != 2 || got[0] != "kubeconfig: "+kcPath || got[1] != "ready" {
		cancel()
		t.Fatalf("stdout %q, want the kubeconfig line then ready (run: %v)", got, <-done)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kcPath)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := kubevirt.NewForConfigOrDie(cfg).KubevirtV1().VirtualMachines("default").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(vms.Items) != 0 {
		t.Errorf("list VMs through the announced kubeconfig: %v (%d items)", err, len(vms.Items))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return 30 s after its context ended")
	}
	if _, err := os.Stat(kcPath); !os.IsNotExist(err) {
		t.Errorf("kubeconfig left behind: %v", err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
