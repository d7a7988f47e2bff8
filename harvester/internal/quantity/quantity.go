// Package quantity bounds the resource.Quantity strings the driver parses: those the API server sends and those of
// a VM patched by --harvester-vm-patch. It parses nothing and knows no client, so that the pure builders
// (harvester/objects) and the client layer (harvester/internal/kube) hold quantities to the same bound.
package quantity

import (
	"fmt"
	"strings"
)

// A resource.Quantity is a number the driver does not choose: a ResourceQuota's hard and used amounts, a node's
// allocatable devices, a VM's memory, the quantities of a VM patch. Parsing one, and the arithmetic after, is not
// bounded by its length: resource.ParseQuantity rounds every amount to 1n, which for "1e-1000000000" means
// dividing by 10^(10^9) (minutes and hundreds of MB), and "1e1000000000", which it parses at once as
// 1 × 10^(10^9), makes Quantity.Sub and Cmp with any other amount build that number (k8s.io/apimachinery
// pkg/api/resource quantity.go, ParseQuantity; amount.go, int64Amount.AsScale; inf.Dec rescale). The API server
// does not refuse such amounts in a ResourceQuota: it checks only that they are not negative and, for counts,
// whole (k8s.io/kubernetes pkg/apis/core/validation, ValidateResourceQuantityValue). So the driver bounds their
// form (Form) before anything parses the string: no run of more than MaxDigits digits and no decimal exponent
// beyond ±MaxExponent. What passes parses and compares in microseconds. Any amount Kubernetes can hold, in the
// form it writes it (CanonicalizeBytes: at most 28 digits and an SI suffix, or an exponent from -9 to 18), passes.
const (
	// MaxDigits is the longest run of digits in a quantity's number.
	MaxDigits = 64
	// MaxExponent bounds a decimal exponent (1e3). A number of at most MaxDigits digits on each side of the
	// point is below 10^64 and, when not 0, at least 10^-64: an amount from 1n to 2^63−1 written with it has an
	// exponent from -72 to 83, and 0 needs none.
	MaxExponent = 99
)

// Error is a quantity the driver will not parse. Field names where it was (a path in the object, as
// status.hard[requests.storage]), when known.
type Error struct {
	Field  string
	Value  string // at most 40 characters of it, quoted
	Reason string
}

func (e *Error) Error() string {
	where := "quantity"
	if e.Field != "" {
		where = e.Field
	}
	return fmt.Sprintf("%s %s %s", where, e.Value, e.Reason)
}

// within prefixes the field with where it is (a field name, or an index in brackets).
func (e *Error) within(segment string) *Error {
	if e.Field == "" || strings.HasPrefix(e.Field, "[") || segment == "" {
		e.Field = segment + e.Field
	} else {
		e.Field = segment + "." + e.Field
	}
	return e
}

func formError(s, reason string) *Error {
	v := s
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	return &Error{Value: fmt.Sprintf("%q", v), Reason: reason}
}

// Form checks that s can be parsed, and computed with, in bounded time (see MaxDigits and MaxExponent): it
// returns an *Error naming what is too large, or nil. It does not check that s is a quantity at all:
// resource.ParseQuantity does, at once, once this has passed.
func Form(s string) error {
	t := strings.TrimSpace(s) // as Quantity.UnmarshalJSON does
	run := 0
	for i := 0; i < len(t); i++ {
		if t[i] >= '0' && t[i] <= '9' {
			if run++; run > MaxDigits {
				return formError(s, fmt.Sprintf("has a run of more than %d digits, more than any amount Kubernetes can hold needs", MaxDigits))
			}
			continue
		}
		run = 0
	}
	// A decimal exponent is an e or E followed by an optional sign and digits, up to the end
	// (resource.ParseQuantity's suffix; an E followed by i, or nothing, is exbi or exa).
	i := strings.IndexAny(t, "eE")
	if i < 0 {
		return nil
	}
	digits := t[i+1:]
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return nil
	}
	if significant := strings.TrimLeft(digits, "0"); len(significant) > 2 {
		return formError(s, fmt.Sprintf("has a decimal exponent beyond ±%d: no amount Kubernetes can hold (at most 2^63−1, to 1n) is written so", MaxExponent))
	}
	return nil
}
