package kube

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The refusals as the API server returns them: the Status a webhook answered, with the message
// k8s.io/apiserver's ToStatusErr makes of it; a webhook the API server could not call
// (apierrors.NewInternalError of an ErrCallingWebhook); NewDryRunUnsupportedErr.
func TestAsWebhookRefusal(t *testing.T) {
	status := func(code int32, reason metav1.StatusReason, msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
	}
	long := strings.Repeat("é", maxRefusal) // two bytes each: the cut falls inside one
	for _, tc := range []struct {
		name      string
		err       error
		want      WebhookRefusal
		refused   bool
		noDryRuns string
	}{
		{"harvester", status(500, metav1.StatusReasonInternalError, `admission webhook "validator.harvesterhci.io" denied the request: duplicate mac address present for vm m1 for cluster network mgmt`),
			WebhookRefusal{Webhook: "validator.harvesterhci.io", Message: "duplicate mac address present for vm m1 for cluster network mgmt"}, true, ""},
		{"a colon in the message", status(422, metav1.StatusReasonInvalid, `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: spec.running: Invalid value: "true": a: b`),
			WebhookRefusal{Webhook: "virtualmachine-validator.kubevirt.io", Message: `spec.running: Invalid value: "true": a: b`}, true, ""},
		{"without explanation", status(400, "", `admission webhook "policy.example.com" denied the request without explanation`),
			WebhookRefusal{Webhook: "policy.example.com"}, true, ""},
		{"a quote in the name", status(400, "", `admission webhook "a\"b" denied the request: no`), WebhookRefusal{Webhook: `a"b`, Message: "no"}, true, ""},
		{"bounded", status(400, "", `admission webhook "w.example.com" denied the request: `+long),
			WebhookRefusal{Webhook: "w.example.com", Message: strings.Repeat("é", maxRefusal/2) + " …"}, true, ""},
		{"not called", apierrors.NewInternalError(errors.New(`failed calling webhook "validator.harvesterhci.io": context deadline exceeded`)), WebhookRefusal{}, false, ""},
		{"no dry runs", apierrors.NewBadRequest(`admission webhook "sideeffects.example.com" does not support dry run`), WebhookRefusal{}, false, "sideeffects.example.com"},
		{"wrapped", fmt.Errorf("create: %w", status(400, "", `admission webhook "w.example.com" denied the request: no`)), WebhookRefusal{Webhook: "w.example.com", Message: "no"}, true, ""},
		{"not a Status", errors.New(`admission webhook "w.example.com" denied the request: no`), WebhookRefusal{}, false, ""},
		{"a success", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusSuccess, Message: `admission webhook "w" denied the request: no`}}, WebhookRefusal{}, false, ""},
		{"another answer", status(400, "", `admission webhook "w.example.com" said something else`), WebhookRefusal{}, false, ""},
		{"unquoted", status(400, "", `admission webhook w.example.com denied the request: no`), WebhookRefusal{}, false, ""},
		{"nil", nil, WebhookRefusal{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, refused := AsWebhookRefusal(tc.err)
			if got != tc.want || refused != tc.refused {
				t.Errorf("AsWebhookRefusal = %+v, %v; want %+v, %v", got, refused, tc.want, tc.refused)
			}
			webhook, ok := DryRunUnsupportedBy(tc.err)
			if webhook != tc.noDryRuns || ok != (tc.noDryRuns != "") {
				t.Errorf("DryRunUnsupportedBy = %q, %v; want %q", webhook, ok, tc.noDryRuns)
			}
		})
	}
}
