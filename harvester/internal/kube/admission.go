package kube

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DryRunAll are the options of a create the API server judges as it would a real one and then does not store:
// authorization, the admission plugins and every admission webhook (each must declare sideEffects None or
// NoneOnDryRun, else the request fails), validation, and the name's uniqueness — and no object, no
// resourceVersion, no watch event (k8s.io/apiserver pkg/registry/generic/registry: Store.create runs the
// validating admission before DryRunnableStorage.Create, which with dryRun only checks that the key is free).
func DryRunAll() metav1.CreateOptions {
	return metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
}

// WebhookRefusal is an admission webhook's refusal of a request.
type WebhookRefusal struct {
	// Webhook is the webhook's name as its configuration registers it, such as validator.harvesterhci.io.
	Webhook string
	// Message is what the webhook said, bounded (maxRefusal); "" when it gave no reason.
	Message string
}

// maxRefusal bounds a webhook's message as the driver repeats it: a webhook is another party's code.
const maxRefusal = 1000

// The API server words a webhook's refusal as "admission webhook %q denied the request: <the webhook's message>"
// (or "… denied the request without explanation") and one that cannot take a dry run as "admission webhook %q
// does not support dry run" (k8s.io/apiserver pkg/admission/plugin/webhook/errors, ToStatusErr and
// NewDryRunUnsupportedErr). The webhook's name is in that message only: the rest of the Status (code, reason,
// details and causes) is what the webhook answered, which names no webhook.
const (
	webhookPrefix    = "admission webhook "
	deniedBecause    = " denied the request: "
	deniedWithout    = " denied the request without explanation"
	dryRunIncapable  = " does not support dry run"
	webhookNameLimit = 253 // a webhook's name is a DNS subdomain
)

// AsWebhookRefusal reports whether err is the API server saying that an admission webhook refused the request,
// and which one and why.
func AsWebhookRefusal(err error) (WebhookRefusal, bool) {
	name, rest, ok := webhookStatus(err)
	if !ok {
		return WebhookRefusal{}, false
	}
	if msg, ok := strings.CutPrefix(rest, deniedBecause); ok {
		return WebhookRefusal{Webhook: name, Message: bounded(msg)}, true
	}
	if rest != deniedWithout {
		return WebhookRefusal{}, false
	}
	return WebhookRefusal{Webhook: name}, true
}

// DryRunUnsupportedBy returns the webhook that makes the API server refuse a dry run: its configuration does
// not declare that it has no side effects, so the API server may not call it without the request being real.
func DryRunUnsupportedBy(err error) (webhook string, ok bool) {
	name, rest, ok := webhookStatus(err)
	if !ok || rest != dryRunIncapable {
		return "", false
	}
	return name, true
}

// webhookStatus splits the message of a failure Status that the API server made of a webhook's answer into
// the webhook's name and what follows it.
func webhookStatus(err error) (name, rest string, ok bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Status != metav1.StatusFailure {
		return "", "", false
	}
	msg, ok := strings.CutPrefix(status.Status().Message, webhookPrefix)
	if !ok {
		return "", "", false
	}
	quoted, err := strconv.QuotedPrefix(msg)
	if err != nil {
		return "", "", false
	}
	name, err = strconv.Unquote(quoted)
	if err != nil || name == "" || len(name) > webhookNameLimit {
		return "", "", false
	}
	return name, msg[len(quoted):], true
}

// ServerMessage is what the API server said in a failure Status (its message), else err as it reads, bounded as a
// webhook's refusal is (maxRefusal): an admission plugin's or policy's message is another party's words.
func ServerMessage(err error) string { return bounded(serverMessage(err)) }

// bounded cuts s to maxRefusal bytes, on a character's boundary, marking the cut.
func bounded(s string) string {
	if len(s) <= maxRefusal {
		return s
	}
	cut := maxRefusal
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …"
}
