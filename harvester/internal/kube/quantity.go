package kube

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// A resource.Quantity from the API server is a number the driver does not choose: a ResourceQuota's hard and used
// amounts, a node's allocatable devices, a VM's memory. Parsing one, and the arithmetic after, is not bounded by
// its length: resource.ParseQuantity rounds every amount to 1n, which for "1e-1000000000" means dividing by
// 10^(10^9) (minutes and hundreds of MB), and "1e1000000000", which it parses at once as 1 × 10^(10^9), makes
// Quantity.Sub and Cmp with any other amount build that number (k8s.io/apimachinery pkg/api/resource quantity.go,
// ParseQuantity; amount.go, int64Amount.AsScale; inf.Dec rescale). The API server does not refuse such amounts in
// a ResourceQuota: it checks only that they are not negative and, for counts, whole
// (k8s.io/kubernetes pkg/apis/core/validation, ValidateResourceQuantityValue). So the driver bounds them itself,
// in two steps:
//
//   - The form (QuantityForm), before anything parses the string: no run of more than MaxQuantityDigits digits
//     and no decimal exponent beyond ±MaxQuantityExponent. What passes parses and compares in microseconds.
//     Every object the driver decodes is held to it (FromUnstructured and the VM client's decoder, guard.go).
//   - The range (QuantityInRange), before arithmetic: at most 2^63−1 in magnitude, the most a Quantity holds
//     ("No matter which of the three exponent forms is used, no quantity may represent a number greater than
//     2^63-1 in magnitude", the Quantity type's documentation; resource.MaxMilliValue is that bound in
//     thousandths). ParseQuantity caps a larger binary-suffixed amount at 2^63−1 and keeps a larger decimal one
//     as it is; neither is what the object meant. The code that computes with a quantity checks it.
//
// Any amount Kubernetes can hold, in the form it writes it (CanonicalizeBytes: at most 28 digits and an SI
// suffix, or an exponent from -9 to 18), passes both.
const (
	// MaxQuantityDigits is the longest run of digits in a quantity's number.
	MaxQuantityDigits = 64
	// MaxQuantityExponent bounds a decimal exponent (1e3). A number of at most MaxQuantityDigits digits on each
	// side of the point is below 10^64 and, when not 0, at least 10^-64: an amount from 1n to 2^63−1 written with
	// it has an exponent from -72 to 83, and 0 needs none.
	MaxQuantityExponent = 99
)

var (
	maxQuantity = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	minQuantity = *resource.NewQuantity(-math.MaxInt64, resource.DecimalSI)
)

// QuantityError is a quantity the driver will not parse. Field names where it was (a path in the object, as
// status.hard[requests.storage]), when known.
type QuantityError struct {
	Field  string
	Value  string // at most 40 characters of it, quoted
	Reason string
}

func (e *QuantityError) Error() string {
	where := "quantity"
	if e.Field != "" {
		where = e.Field
	}
	return fmt.Sprintf("%s %s %s", where, e.Value, e.Reason)
}

// within prefixes the field with where it is (a field name, or an index in brackets).
func (e *QuantityError) within(segment string) *QuantityError {
	if e.Field == "" || strings.HasPrefix(e.Field, "[") || segment == "" {
		e.Field = segment + e.Field
	} else {
		e.Field = segment + "." + e.Field
	}
	return e
}

func quantityError(s, reason string) *QuantityError {
	v := s
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	return &QuantityError{Value: fmt.Sprintf("%q", v), Reason: reason}
}

// QuantityForm checks that s can be parsed, and computed with, in bounded time (see MaxQuantityDigits and
// MaxQuantityExponent): it returns a *QuantityError naming what is too large, or nil. It does not check that s is
// a quantity at all: resource.ParseQuantity does, at once, once this has passed.
func QuantityForm(s string) error {
	t := strings.TrimSpace(s) // as Quantity.UnmarshalJSON does
	run := 0
	for i := 0; i < len(t); i++ {
		if t[i] >= '0' && t[i] <= '9' {
			if run++; run > MaxQuantityDigits {
				return quantityError(s, fmt.Sprintf("has a run of more than %d digits, more than any amount Kubernetes can hold needs", MaxQuantityDigits))
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
		return quantityError(s, fmt.Sprintf("has a decimal exponent beyond ±%d: no amount Kubernetes can hold (at most 2^63−1, to 1n) is written so", MaxQuantityExponent))
	}
	return nil
}

// QuantityInRange checks a quantity against ±(2^63−1), the most a Quantity holds; the error names the amount.
// q must have passed QuantityForm (every quantity of an object the driver decoded has), or the comparison may build
// a huge number. resource.ParseQuantity caps a binary-suffixed amount beyond the bound at the bound (8Ei becomes
// 2^63−1): a BinarySI quantity of exactly ±(2^63−1) is taken for such a capped one, since Kubernetes never writes
// that amount with a binary suffix (its canonical form of 2^63−1 is 9223372036854775807: CanonicalizeBytes).
func QuantityInRange(q resource.Quantity) error {
	switch {
	case q.Format == resource.BinarySI && (q.Cmp(maxQuantity) == 0 || q.Cmp(minQuantity) == 0):
		return errors.New("is more than 2^63−1 in magnitude (resource.ParseQuantity caps it there), which no Kubernetes quantity holds")
	case q.Cmp(maxQuantity) > 0 || q.Cmp(minQuantity) < 0:
		return fmt.Errorf("%s is beyond what a Kubernetes quantity holds (2^63−1 in magnitude)", q.String())
	}
	return nil
}
