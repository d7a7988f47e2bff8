package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// The driver's two reads outside the Kubernetes clients (Rancher's token API, a Cluster API Cluster in Rancher's
// cluster) GET a JSON document with a client of HTTPClient and read a bounded answer: getBounded.

// answer is what getBounded read: the status, and the body up to the budget.
type answer struct {
	status     int
	statusText string // the status line's, "404 Not Found"
	body       []byte // at most the budget and one byte
	readErr    error  // reading the body failed; the status stands
	over       bool   // the body is longer than the budget
}

// getBounded GETs endpoint, asking for JSON, and reads at most budget bytes of the answer. Only a request that got
// no answer is an error; it names the endpoint once (scrubURLError).
func getBounded(ctx context.Context, client *http.Client, endpoint string, budget int) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: %w", endpoint, scrubURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(budget)+1))
	return answer{status: resp.StatusCode, statusText: resp.Status, body: body, readErr: err, over: len(body) > budget}, nil
}

// scrubURLError drops the URL an *url.Error repeats (the caller names the endpoint once).
func scrubURLError(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}
