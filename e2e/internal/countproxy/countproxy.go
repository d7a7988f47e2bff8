// Package countproxy is a proxy in front of the simulated Harvester's API server that counts the plugin's
// requests by verb, for the benchmarks (make bench) and the scenario that holds a machine's life to its budget.
package countproxy

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Proxy forwards plain-HTTP requests to the API server with the admin credential and counts the plugin's
// requests (recognised by its User-Agent: client-go names the binary, docker-machine-driver-harvester/…) by verb.
type Proxy struct {
	mu     sync.Mutex
	counts map[string]int
	server *http.Server
	url    string
	// latency is added before each plugin request is forwarded (see SetLatency).
	latency atomic.Int64
}

// Start starts a proxy to the API server admin reaches, on a loopback port.
func Start(admin *rest.Config) (*Proxy, error) {
	target, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	p := &Proxy{counts: map[string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.url = "http://" + l.Addr().String()
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.UserAgent(), "docker-machine-driver-harvester/") {
			p.count(verb(r))
			time.Sleep(time.Duration(p.latency.Load()))
		}
		rp.ServeHTTP(w, r)
	})}
	go p.server.Serve(l)
	return p, nil
}

// verb names a request the way the API server's audit log does: watch and list are GETs with a meaning.
func verb(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && q.Get("watch") == "true":
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
func (p *Proxy) Close() { p.server.Close() }

// Kubeconfig is a credential for the plugin that points at the proxy (which adds the real one).
func (p *Proxy) Kubeconfig() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: p.url}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	cfg.CurrentContext = "bench"
	return clientcmd.Write(*cfg)
}

// Total is the number of requests counts holds.
func Total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
