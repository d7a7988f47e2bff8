package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A write may have been carried out unless the server refused it: a lost answer or a 5xx leaves it open.
func TestMayHaveApplied(t *testing.T) {
	vms := schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"connection reset", &url.Error{Op: "Post", URL: "https://h/x", Err: errors.New("read tcp: connection reset by peer")}, true},
		{"unexpected EOF", fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF), true},
		{"client deadline", context.DeadlineExceeded, true},
		{"server timeout 504", apierrors.NewTimeoutError("request did not complete within the allowed duration", 0), true},
		{"etcd timeout 500", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"503", apierrors.NewServiceUnavailable("unavailable"), true},
		{"already exists", apierrors.NewAlreadyExists(vms, "m1"), false},
		{"admission denied", apierrors.NewBadRequest(`admission webhook "validator.harvesterhci.io" denied the request`), false},
		{"forbidden", apierrors.NewForbidden(vms, "m1", errors.New("no")), false},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), false},
	} {
		if got := MayHaveApplied(tt.err); got != tt.want {
			t.Errorf("%s: MayHaveApplied = %v, want %v", tt.name, got, tt.want)
		}
	}
}
