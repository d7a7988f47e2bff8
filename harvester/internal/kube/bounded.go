package kube

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// The driver reads whole responses into memory (client-go decodes a response from a byte slice), so a server that
// streams an endless body — hostile, or a broken proxy in front of Harvester — would grow the plugin until it is
// killed. Response bodies are therefore read within a budget:
//
//   - ResponseBudget for all responses being read at once, together: the pre-flight reads about ten lists at
//     once, so a budget per response would be multiplied by them (ten endless responses of 32 MiB each grew the
//     plugin past 500 MB). The largest legitimate response is a list the pre-flight reads from the API server's
//     watch cache (resourceVersion=0), which serves it whole, ignoring pagination: all VirtualMachineInstances of
//     the cluster (for vGPU and host-device capacity), all Nodes, all PCI devices. A VMI is 5 to 10 KB of JSON,
//     so 32 MiB holds more than 3,000 VMIs, far beyond what one Harvester cluster runs.
//   - EventBudget for one event of a watch (the bytes between two newlines: the API server writes one JSON event a
//     line, k8s.io/apimachinery pkg/runtime/serializer/json Serializer.Encode): a watch is endless by design, but
//     each event holds one object, and etcd refuses objects over 1.5 MiB (its --max-request-bytes default). Only
//     the event being read counts towards ResponseBudget.
const (
	ResponseBudget = 16 << 20
	EventBudget    = 4 << 20
)

// ResponseTooLargeError is a response from the API server that grew past its budget.
type ResponseTooLargeError struct {
	Method   string
	Endpoint string // scheme, host and path of the request, without user information or query
	Budget   int64
	Watch    bool
	// Together is set when the responses being read at once grew past ResponseBudget together.
	Together bool
}

func (e *ResponseTooLargeError) Error() string {
	what := "the response to " + e.Method + " " + e.Endpoint
	if e.Watch {
		what = "an event of the watch " + e.Endpoint
	}
	if e.Together {
		what = "the responses read at once, " + what + " among them,"
	}
	return fmt.Sprintf("%s grew past %d MiB, more than any Harvester object or list the driver reads needs; the driver stopped reading it. "+
		"Check that the kubeconfig's server is Harvester's API (or Rancher's proxy to it) and that nothing between them rewrites responses",
		what, e.Budget>>20)
}

// boundedTransport reads every response body within the budgets (see ResponseBudget); inFlight counts the bytes
// of its responses read and not yet closed (for a watch, of the event being read).
type boundedTransport struct {
	next     http.RoundTripper
	inFlight atomic.Int64
}

// BoundResponses wraps a transport so that no response body is read past the budgets: ResponseBudget for the
// responses being read at once, together, EventBudget for each event of a watch. Past them, the read fails with a
// *ResponseTooLargeError.
func BoundResponses(next http.RoundTripper) http.RoundTripper { return &boundedTransport{next: next} }

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b := &boundedBody{body: resp.Body, inFlight: &t.inFlight, limit: ResponseBudget,
		tooLarge: ResponseTooLargeError{Method: req.Method, Endpoint: endpoint(req.URL), Budget: ResponseBudget}}
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		b.tooLarge.Watch, b.tooLarge.Budget, b.limit = true, EventBudget, EventBudget
	}
	resp.Body = b
	return resp, nil
}

// boundedBody fails a read once more than limit bytes of it have been read (for a watch, since the last
// newline), or once the responses being read at once hold more than ResponseBudget together. A watch's body is
// closed from another goroutine than the one reading it: mu guards the count.
type boundedBody struct {
	body     io.ReadCloser
	inFlight *atomic.Int64 // shared by the transport's responses
	limit    int64
	tooLarge ResponseTooLargeError

	mu      sync.Mutex
	counted int64 // bytes of this body counted in inFlight
	closed  bool
}

func (b *boundedBody) Read(p []byte) (int, error) {
	room := b.room()
	if room <= 0 {
		// The budget is spent: a body that ends exactly here is whole, any byte more is too much.
		var one [1]byte
		if n, err := b.body.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, b.fail(false)
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.body.Read(p)
	newline := -1
	if b.tooLarge.Watch {
		newline = bytes.LastIndexByte(p[:n], '\n')
	}
	if b.count(n, newline) {
		return n, b.fail(true)
	}
	return n, err
}

// room is how many more bytes this body may read.
func (b *boundedBody) room() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit - b.counted
}

// count counts n bytes just read, of which those up to newline (-1: none) end a watch's event and are released,
// and reports whether the responses being read at once now hold more than ResponseBudget.
func (b *boundedBody) count(n, newline int) (over bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	add := int64(n)
	if newline >= 0 {
		add = int64(n-1-newline) - b.counted // only the event after the newline is still being read
	}
	b.counted += add
	return b.inFlight.Add(add) > ResponseBudget
}

func (b *boundedBody) fail(together bool) error {
	e := b.tooLarge
	e.Together = together
	return &e
}

// Close closes the body and releases its bytes from the transport's count.
func (b *boundedBody) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.inFlight.Add(-b.counted)
		b.counted = 0
	}
	b.mu.Unlock()
	return b.body.Close()
}

// endpoint names a request's URL in messages: scheme, host and path, without user information or query.
func endpoint(u *url.URL) string {
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return shown.String()
}
