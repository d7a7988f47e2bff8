package standin

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// callCounter counts API requests by verb and resource.
type callCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func newCallCounter() *callCounter { return &callCounter{counts: map[string]int{}} }

func (c *callCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.counts[label(req)]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func (c *callCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// label turns a request into "VERB resource[/subresource]": the path is
// /api/v1[/namespaces/<ns>]/<resource>[/<name>[/<sub>]] or /apis/<group>/<version>[/namespaces/<ns>]/<resource>…
func label(req *http.Request) string {
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return verb + " " + req.URL.Path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return verb + " " + req.URL.Path
	case 1, 2:
		return verb + " " + parts[0]
	default:
		return verb + " " + parts[0] + "/" + parts[2]
	}
}
