package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// endless writes b over and over until the client goes away.
func endless(b []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for r.Context().Err() == nil {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
	}
}

// A response that never ends is cut at ResponseBudget: the call fails with an error naming the endpoint, and the
// words a user reads say why and what to check.
func TestEndlessResponseStopsAtTheBudget(t *testing.T) {
	srv := httptest.NewServer(endless(append([]byte(`{"kind":"NodeList","items":[`), bytes.Repeat([]byte(`{"a":1},`), 4096)...)))
	defer srv.Close()
	c, err := NewForConfig(&rest.Config{Host: srv.URL}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = List(context.Background(), c, Nodes, "", metav1.ListOptions{})
	var tooLarge *ResponseTooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("want a ResponseTooLargeError, got %v", err)
	}
	if tooLarge.Watch || tooLarge.Budget != ResponseBudget || tooLarge.Endpoint != srv.URL+"/api/v1/nodes" || tooLarge.Method != http.MethodGet {
		t.Errorf("got %+v", tooLarge)
	}
	explained := c.Explain("list", "the hosts", err).Error()
	want := "cannot list the hosts: the response to GET " + srv.URL + "/api/v1/nodes grew past 16 MiB, more than any Harvester object or list the driver reads needs"
	if !strings.HasPrefix(explained, want) || strings.Contains(explained, "Please retry") {
		t.Errorf("explained as %q, want it to start with %q", explained, want)
	}
}

// A watch is endless by design: only each event is bounded, counted from the last newline.
func TestWatchEventsAreBoundedOneByOne(t *testing.T) {
	event := append(bytes.Repeat([]byte("x"), 1<<20), '\n')
	for _, tt := range []struct {
		name  string
		body  []byte // repeated up to total bytes
		total int64
		err   bool
	}{
		{"many events, each within the budget", event, 3 * EventBudget, false},
		{"one event past the budget", bytes.Repeat([]byte("x"), 1<<20), EventBudget + 1, true},
		{"an event exactly at the budget", append(bytes.Repeat([]byte("x"), EventBudget-1), '\n'), 2 * EventBudget, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := io.LimitReader(&repeat{b: tt.body}, tt.total)
			b := &boundedBody{body: io.NopCloser(body), inFlight: new(atomic.Int64), limit: EventBudget,
				tooLarge: ResponseTooLargeError{Watch: true, Budget: EventBudget}}
			n, err := io.Copy(io.Discard, b)
			var tooLarge *ResponseTooLargeError
			if tt.err != (err != nil) || (err != nil && (!errors.As(err, &tooLarge) || tooLarge.Together)) {
				t.Fatalf("read %d bytes, error %v", n, err)
			}
			if !tt.err && n != tt.total {
				t.Errorf("read %d bytes, want %d", n, tt.total)
			}
		})
	}
}

// A body exactly as long as the budget is whole; one byte more is too large.
func TestResponseExactlyAtTheBudget(t *testing.T) {
	for _, tt := range []struct {
		size int64
		err  bool
	}{{ResponseBudget, false}, {ResponseBudget + 1, true}} {
		body := io.NopCloser(io.LimitReader(&repeat{b: []byte("x")}, tt.size))
		n, err := io.Copy(io.Discard, &boundedBody{body: body, inFlight: new(atomic.Int64), limit: ResponseBudget,
			tooLarge: ResponseTooLargeError{Budget: ResponseBudget}})
		if tt.err != (err != nil) || n > ResponseBudget {
			t.Errorf("%d bytes: read %d, error %v", tt.size, n, err)
		}
	}
}

// The responses read at once share one budget: reads that together pass it fail, and a closed response gives its
// bytes back.
func TestResponsesReadAtOnceShareTheBudget(t *testing.T) {
	tr := &boundedTransport{}
	open := func() *boundedBody {
		return &boundedBody{body: io.NopCloser(&repeat{b: []byte("x")}), inFlight: &tr.inFlight, limit: ResponseBudget,
			tooLarge: ResponseTooLargeError{Method: "GET", Endpoint: "https://h/api/v1/nodes", Budget: ResponseBudget}}
	}
	read := func(b *boundedBody, n int64) error {
		_, err := io.CopyN(io.Discard, b, n)
		return err
	}
	first, second := open(), open()
	if err := read(first, ResponseBudget/2+1); err != nil {
		t.Fatal(err)
	}
	err := read(second, ResponseBudget/2+1)
	var tooLarge *ResponseTooLargeError
	if !errors.As(err, &tooLarge) || !tooLarge.Together ||
		!strings.HasPrefix(err.Error(), "the responses read at once, the response to GET https://h/api/v1/nodes among them, grew past 16 MiB") {
		t.Fatalf("want the two responses refused together, got %v", err)
	}
	first.Close()
	second.Close()
	if got := tr.inFlight.Load(); got != 0 {
		t.Fatalf("%d bytes still counted after both responses closed", got)
	}
	if err := read(open(), ResponseBudget); err != nil {
		t.Errorf("after the others closed, one response may use the whole budget: %v", err)
	}
}

// repeat reads b over and over.
type repeat struct {
	b   []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}
