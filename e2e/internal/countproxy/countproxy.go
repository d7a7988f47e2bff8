// Package countproxy is a proxy in front of the simulated Harvester's API server that counts the plugin's
// requests by verb, for the benchmarks (make bench) and the scenario that holds a machine's life to its budget.
// It is e2e/apiproxy's proxy with one fault of its own: the plugin's requests are counted, and delayed when asked,
// before they are forwarded.
package countproxy

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/apiproxy"
)

// Proxy forwards plain-HTTP requests to the API server with the admin credential and counts the plugin's
// requests (recognised by its User-Agent: client-go names the binary, docker-machine-driver-harvester/…) by verb.
type Proxy struct {
	proxy  *apiproxy.Proxy
	mu     sync.Mutex
	counts map[string]int
	// latency is added before each plugin request is forwarded (see SetLatency).
	latency atomic.Int64
}

// Start starts a proxy to the API server admin reaches, on a loopback port.
func Start(admin *rest.Config) (*Proxy, error) {
	ap, err := apiproxy.Start(admin)
	if err != nil {
		return nil, err
	}
	p := &Proxy{proxy: ap, counts: map[string]int{}}
	ap.Forward(fromPlugin, func(r *http.Request) {
		p.count(verb(r))
		time.Sleep(time.Duration(p.latency.Load()))
	})
	return p, nil
}

// fromPlugin selects the plugin's requests.
func fromPlugin(r *http.Request) bool {
	return strings.HasPrefix(r.UserAgent(), "docker-machine-driver-harvester/")
}

// verb names a request the way the API server's audit log does: watch and list are GETs with a meaning.
func verb(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case apiproxy.Watches(r):
		return "watch"
	case r.Method == http.MethodGet && (q.Has("fieldSelector") || q.Has("labelSelector") || q.Has("limit")):
		return "list"
	}
	return strings.ToLower(r.Method)
}

func (p *Proxy) count(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[v]++
}

// SetLatency delays each plugin request by d before it is forwarded: a Harvester reached over a network, where
// every request waits at least a round trip whatever the API server's load (0: loopback, no delay).
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// Take returns the counts since the last Take and starts over.
func (p *Proxy) Take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = map[string]int{}
	return c
}

// Close stops the proxy.
func (p *Proxy) Close() { p.proxy.Close() }

// Kubeconfig is a credential for the plugin that points at the proxy (which adds the real one).
func (p *Proxy) Kubeconfig() []byte { return p.proxy.Kubeconfig() }

// Total is the number of requests counts holds.
func Total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
