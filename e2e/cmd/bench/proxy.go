package main

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

// countingProxy forwards plain-HTTP requests to the API server with the admin credential and counts the
// plugin's requests (recognised by its User-Agent) by verb.
type countingProxy struct {
	mu     sync.Mutex
	counts map[string]int
	server *http.Server
	url    string
	// latency is added before each plugin request is forwarded (see setLatency).
	latency atomic.Int64
}

func startProxy(admin *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	p := &countingProxy{counts: map[string]int{}}
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

func (p *countingProxy) count(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[v]++
}

// setLatency delays each plugin request by d before it is forwarded: a Harvester reached over a network, where
// every request waits at least a round trip whatever the API server's load (0: loopback, no delay).
func (p *countingProxy) setLatency(d time.Duration) { p.latency.Store(int64(d)) }

// take returns the counts since the last take and starts over.
func (p *countingProxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = map[string]int{}
	return c
}

func (p *countingProxy) close() { p.server.Close() }

// kubeconfig is a credential for the plugin that points at the proxy (which adds the real one).
func (p *countingProxy) kubeconfig() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: p.url}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	cfg.CurrentContext = "bench"
	return clientcmd.Write(*cfg)
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
