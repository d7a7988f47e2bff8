package controlplane_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/kubeconfig"
)

func start(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(cp.Logs(40))
		}
		cp.Stop()
	})
	return cp
}

// The admin kubeconfig works, RBAC is on (an unknown token is refused), data survives an API server restart on
// the same URL, and Stop leaves no directory behind.
func TestControlPlane(t *testing.T) {
	cp := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cfg, err := kubeconfig.RESTConfig(cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.36.3" {
		t.Errorf("server version %q, want v1.36.3 (version ldflags in hack/tools.sh)", v.GitVersion)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives-restart"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stranger := cp.AdminConfig()
	stranger.BearerToken = "not-a-token"
	_, err = kubernetes.NewForConfigOrDie(stranger).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("unknown token: got %v, want 401 Unauthorized", err)
	}

	// A paused server answers nothing, and once resumed answers again with nothing lost.
	for _, server := range []string{controlplane.APIServer, controlplane.Etcd} {
		resume, err := cp.Pause(server)
		if err != nil {
			t.Fatal(err)
		}
		short, cancelShort := context.WithTimeout(ctx, time.Second)
		_, err = cs.CoreV1().ConfigMaps("default").Update(short, cm, metav1.UpdateOptions{})
		cancelShort()
		resume()
		resume() // a second resume does nothing
		if err == nil {
			t.Errorf("an update went through while %s was paused", server)
		}
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("after %s was resumed: %v", server, err)
		}
	}

	url := cp.URL()
	t0 := time.Now()
	cp.StopAPIServer()
	t.Logf("stop took %v", time.Since(t0))
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if cp.URL() != url {
		t.Errorf("URL changed across restart: %s -> %s", url, cp.URL())
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survives-restart", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after restart, with the kubeconfig from before: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("after restart: data %v, want k=v", got.Data)
	}

	dir := cp.Dir()
	cp.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind (stat: %v)", dir, err)
	}
}
