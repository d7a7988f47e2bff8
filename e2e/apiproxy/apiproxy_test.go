package apiproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// upstream is a stand-in API server: it counts the ConfigMap creates it carries out and streams watches until
// the client goes.
func upstream(t *testing.T, created *atomic.Int32) *rest.Config {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost:
			created.Add(1)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"}}`)
		case r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := io.WriteString(w, `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1"}}}`+"\n"); err != nil {
					return
				}
				http.NewResponseController(w).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		default:
			_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// client returns a clientset that talks to the API server through p, as the plugin does.
func client(t *testing.T, p *Proxy) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(p.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func newConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
}

func TestFaults(t *testing.T) {
	var created atomic.Int32
	p, err := Start(upstream(t, &created))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cms := client(t, p).CoreV1().ConfigMaps("ns")
	ctx := context.Background()

	// A lost answer: the server carried the create out, the client got a reset connection.
	lost := p.LoseAnswer(Method(http.MethodPost, "/api/v1/namespaces/ns/configmaps")).Times(1)
	_, err = cms.Create(ctx, newConfigMap("a"), metav1.CreateOptions{})
	if err == nil || !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("a lost answer: %v, want a reset connection", err)
	}
	if created.Load() != 1 || lost.Taken() != 1 {
		t.Errorf("the server carried out %d creates, the fault took %d", created.Load(), lost.Taken())
	}
	if _, err := cms.Create(ctx, newConfigMap("b"), metav1.CreateOptions{}); err != nil {
		t.Errorf("the fault was for one request; the next: %v", err)
	}

	// Answers of its own: a 503 reaches the client as such; a 429 with Retry-After is retried by client-go.
	unavailable := p.Answer(Method(http.MethodGet, "/api/v1/namespaces/ns/configmaps/a"), http.StatusServiceUnavailable, 0).Times(1)
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("503: %v", err)
	}
	throttled := p.Answer(Method(http.MethodGet, "/api/v1/namespaces/ns/configmaps/a"), http.StatusTooManyRequests, 1).Times(1)
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("client-go retries a 429 with Retry-After: %v", err)
	}
	if unavailable.Taken() != 1 || throttled.Taken() != 1 {
		t.Errorf("faults took %d and %d requests", unavailable.Taken(), throttled.Taken())
	}

	// A watch the server would stream for ever ends once cut.
	p.Cut(Watches, 300*time.Millisecond)
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range w.ResultChan() {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the watch was not cut")
		}
	}

	// A held request goes on once its gate opens.
	gate := make(chan struct{})
	held := p.Hold(Method(http.MethodPost, "/api/v1/namespaces/ns/configmaps"), gate)
	done := make(chan error, 1)
	go func() { _, err := cms.Create(ctx, newConfigMap("c"), metav1.CreateOptions{}); done <- err }()
	<-held.Arrived()
	before := created.Load()
	close(gate)
	if err := <-done; err != nil || created.Load() != before+1 {
		t.Errorf("held create: %v; %d creates before the gate opened, %d after", err, before, created.Load())
	}
}
