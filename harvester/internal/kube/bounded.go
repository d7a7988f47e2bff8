package kube

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// The driver reads whole responses into memory (client-go decodes a response from a byte slice), so a server that
// streams an endless body — hostile, or a broken proxy in front of Harvester — would grow the plugin until it is
// killed. Every response body is therefore read through a budget:
//
//   - ResponseBudget for a response: the largest legitimate one is a list the pre-flight reads from the API
//     server's watch cache (resourceVersion=0), which serves it whole, ignoring pagination: all
//     VirtualMachineInstances of the cluster (for vGPU and host-device capacity), all Nodes, all PCI devices. A VMI
//     is 5 to 10 KB of JSON, so 32 MiB holds more than 3,000 VMIs, far beyond what one Harvester cluster runs.
//   - EventBudget for one event of a watch (the bytes between two newlines: the API server writes one JSON event a
//     line, k8s.io/apimachinery pkg/runtime/serializer/json Serializer.Encode): a watch is endless by design, but
//     each event holds one object, and etcd refuses objects over 1.5 MiB (its --max-request-bytes default).
const (
	ResponseBudget = 32 << 20
	EventBudget    = 4 << 20
)

// ResponseTooLargeError is a response from the API server that grew past its budget.
type ResponseTooLargeError struct {
	Method   string
	Endpoint string // scheme, host and path of the request, without user information or query
	Budget   int64
	Watch    bool
}

func (e *ResponseTooLargeError) Error() string {
	what := "the response to " + e.Method + " " + e.Endpoint
	if e.Watch {
		what = "an event of the watch " + e.Endpoint
	}
	return fmt.Sprintf("%s grew past %d MiB, more than any Harvester object or list the driver reads needs; the driver stopped reading it. "+
		"Check that the kubeconfig's server is Harvester's API (or Rancher's proxy to it) and that nothing between them rewrites responses",
		what, e.Budget>>20)
}

// boundedTransport reads every response body through its budget (see ResponseBudget).
type boundedTransport struct {
	next http.RoundTripper
}

// BoundResponses wraps a transport so that no response body is read past its budget: ResponseBudget for a
// response, EventBudget for each event of a watch. Past it, the read fails with a *ResponseTooLargeError.
func BoundResponses(next http.RoundTripper) http.RoundTripper { return &boundedTransport{next: next} }

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	tooLarge := &ResponseTooLargeError{Method: req.Method, Endpoint: endpoint(req.URL), Budget: ResponseBudget}
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		tooLarge.Watch, tooLarge.Budget = true, EventBudget
	}
	resp.Body = &boundedBody{body: resp.Body, left: tooLarge.Budget, tooLarge: tooLarge}
	return resp, nil
}

// boundedBody fails a read once more than its budget has been read: of the whole body, or for a watch, since the
// last newline.
type boundedBody struct {
	body     io.ReadCloser
	left     int64
	tooLarge *ResponseTooLargeError
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// The budget is spent: a body that ends exactly here is whole, any byte more is too much.
		var one [1]byte
		if n, err := b.body.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, b.tooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	if b.tooLarge.Watch {
		if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
			b.left = b.tooLarge.Budget - int64(n-1-i)
			return n, err
		}
	}
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// endpoint names a request's URL in messages: scheme, host and path, without user information or query.
func endpoint(u *url.URL) string {
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return shown.String()
}
