// Package apiproxy puts an HTTP proxy between a client under test (the plugin, through rancher-machine) and the
// test bed's API server, and injects there the faults a Harvester's clients meet on the network: a request held
// at a chosen moment, an answer lost after the server carried the request out (the connection reset), watches
// cut, 429 and 503 answers. It forwards with the bed's admin credential; the client gets a kubeconfig for the
// proxy, plain HTTP on 127.0.0.1.
package apiproxy

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Proxy forwards requests to the API server, except where a Fault takes them.
type Proxy struct {
	// URL is the proxy's address, http://127.0.0.1:<port>.
	URL     string
	forward *httputil.ReverseProxy
	server  *http.Server

	mu     sync.Mutex
	faults []*Fault
}

// Start starts a proxy to the API server admin points at, forwarding with admin's credential.
func Start(admin *rest.Config) (*Proxy, error) {
	target, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	p := &Proxy{forward: &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     transport,
		FlushInterval: -1, // watches stream
		// A cut watch, a client gone, a restarting API server: the faults are the point, not noise to log.
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.URL = "http://" + l.Addr().String()
	p.server = &http.Server{Handler: http.HandlerFunc(p.serve)}
	go p.server.Serve(l)
	return p, nil
}

// Close stops the proxy and ends the connections through it.
func (p *Proxy) Close() { p.server.Close() }

// Kubeconfig is a credential for the client under test: the proxy's address, no credential of its own (the
// proxy adds the admin's).
func (p *Proxy) Kubeconfig() []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(err) // only fails on a serializer bug
	}
	return out
}

// serve hands r to the first fault that takes it, else forwards it.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	var f *Fault
	for _, candidate := range p.faults {
		if candidate.takes(r) {
			f = candidate
			break
		}
	}
	p.mu.Unlock()
	if f == nil {
		p.forward.ServeHTTP(w, r)
		return
	}
	f.arrive()
	f.act(p, w, r)
}

// Fault is what the proxy does to the requests a matcher selects, up to a number of them.
type Fault struct {
	match func(*http.Request) bool
	act   func(p *Proxy, w http.ResponseWriter, r *http.Request)
	limit atomic.Int64 // how many more requests it takes; < 0: no limit

	mu      sync.Mutex
	taken   int
	waiters map[int]chan struct{} // closed once taken reaches the key
}

// add installs a fault (after those added before: the first that matches takes a request).
func (p *Proxy) add(match func(*http.Request) bool, act func(*Proxy, http.ResponseWriter, *http.Request)) *Fault {
	f := &Fault{match: match, act: act, waiters: map[int]chan struct{}{}}
	f.limit.Store(-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
	return f
}

// takes reports whether f takes r, counting it against its limit (called under the proxy's lock).
func (f *Fault) takes(r *http.Request) bool {
	if f.limit.Load() == 0 || !f.match(r) {
		return false
	}
	if f.limit.Load() > 0 {
		f.limit.Add(-1)
	}
	return true
}

func (f *Fault) arrive() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taken++
	if c, ok := f.waiters[f.taken]; ok {
		close(c)
	}
}

// Times limits f to the next n requests it matches; it returns f.
func (f *Fault) Times(n int) *Fault {
	f.limit.Store(int64(n))
	return f
}

// Stop ends the fault: requests it would have taken are forwarded from now on.
func (f *Fault) Stop() { f.limit.Store(0) }

// Arrived is closed when the first request the fault takes arrives.
func (f *Fault) Arrived() <-chan struct{} { return f.Arrivals(1) }

// Arrivals is closed once n requests have arrived that the fault took.
func (f *Fault) Arrivals(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.waiters[n]
	if !ok {
		c = make(chan struct{})
		f.waiters[n] = c
		if f.taken >= n {
			close(c)
		}
	}
	return c
}

// Taken is how many requests the fault has taken.
func (f *Fault) Taken() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.taken
}

// Hold holds the requests match selects until gate is closed, then forwards them; a client that goes away
// meanwhile ends its request. A nil gate holds them until their client goes away.
func (p *Proxy) Hold(match func(*http.Request) bool, gate <-chan struct{}) *Fault {
	return p.add(match, func(p *Proxy, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			return
		case <-gate:
		}
		p.forward.ServeHTTP(w, r)
	})
}

// Observe forwards the requests match selects unchanged, and counts them (Arrived, Taken).
func (p *Proxy) Observe(match func(*http.Request) bool) *Fault {
	return p.Forward(match, func(*http.Request) {})
}

// Forward forwards the requests match selects unchanged once each has called each before it goes on (to count
// it, or to delay it by sleeping there), and counts them as Observe does.
func (p *Proxy) Forward(match func(*http.Request) bool, each func(*http.Request)) *Fault {
	return p.add(match, func(p *Proxy, w http.ResponseWriter, r *http.Request) {
		each(r)
		p.forward.ServeHTTP(w, r)
	})
}

// LoseAnswer forwards the requests match selects and waits for the API server's answer, then resets the
// client's connection instead of passing the answer on: the server has carried the request out, and the client
// cannot know it (as when a load balancer or a Rancher proxy drops the connection, or a stream is reset).
func (p *Proxy) LoseAnswer(match func(*http.Request) bool) *Fault {
	return p.add(match, func(p *Proxy, w http.ResponseWriter, r *http.Request) {
		p.forward.ServeHTTP(httptest.NewRecorder(), r) // the answer goes nowhere
		reset(w)
	})
}

// reset closes the client's connection with a TCP reset (SO_LINGER 0), without an answer.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // ends the connection all the same
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	conn.Close()
}

// Answer answers the requests match selects itself, with an API status of code (429, 503…) and, when retryAfter
// is positive, a Retry-After header of that many seconds, as the API server's priority and fairness does on
// 429. The request does not reach the API server.
func (p *Proxy) Answer(match func(*http.Request) bool, code, retryAfter int) *Fault {
	return p.add(match, func(_ *Proxy, w http.ResponseWriter, _ *http.Request) {
		status := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code),
			Reason: reasons[code], Message: "injected by the test's proxy: " + strings.ToLower(http.StatusText(code))}
		w.Header().Set("Content-Type", "application/json")
		if retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			status.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(retryAfter)}
		}
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(status)
	})
}

var reasons = map[int]metav1.StatusReason{
	http.StatusTooManyRequests:     metav1.StatusReasonTooManyRequests,
	http.StatusServiceUnavailable:  metav1.StatusReasonServiceUnavailable,
	http.StatusInternalServerError: metav1.StatusReasonInternalError,
	http.StatusGatewayTimeout:      metav1.StatusReasonTimeout,
}

// Cut forwards the requests match selects (watches) and breaks each answer's connection once it has streamed
// for d, without the end a watch normally has: the client sees its stream broken, and must resume.
func (p *Proxy) Cut(match func(*http.Request) bool, d time.Duration) *Fault {
	return p.add(match, func(p *Proxy, w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		// Once the answer has begun, httputil.ReverseProxy aborts the connection (http.ErrAbortHandler) when
		// reading it from the API server fails, as it does when ctx ends.
		p.forward.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Matchers.

// Method selects requests of method on exactly path.
func Method(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == method && r.URL.Path == path }
}

// Under selects requests of any method on path and below it.
func Under(path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.URL.Path == path || strings.HasPrefix(r.URL.Path, path+"/") }
}

// Watches selects watch requests.
func Watches(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true"
}

// All selects every request.
func All(*http.Request) bool { return true }

// Both selects what both a and b select.
func Both(a, b func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool { return a(r) && b(r) }
}
