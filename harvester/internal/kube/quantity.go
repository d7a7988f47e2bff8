package kube

import (
	"errors"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The quantities the API server sends are bounded in two steps:
//
//   - The form (quantity.Form), before anything parses the string. Every object the driver decodes is held to it
//     (FromUnstructured and the VM client's decoder, guard.go).
//   - The range (QuantityInRange), before arithmetic: at most 2^63−1 in magnitude, the most a Quantity holds
//     ("No matter which of the three exponent forms is used, no quantity may represent a number greater than
//     2^63-1 in magnitude", the Quantity type's documentation; resource.MaxMilliValue is that bound in
//     thousandths). ParseQuantity caps a larger binary-suffixed amount at 2^63−1 and keeps a larger decimal one
//     as it is; neither is what the object meant. The code that computes with a quantity checks it.
//
// Any amount Kubernetes can hold, in the form it writes it, passes both.

var (
	maxQuantity = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	minQuantity = *resource.NewQuantity(-math.MaxInt64, resource.DecimalSI)
)

// QuantityInRange checks a quantity against ±(2^63−1), the most a Quantity holds; the error names the amount.
// q must have passed quantity.Form (every quantity of an object the driver decoded has), or the comparison may build
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
