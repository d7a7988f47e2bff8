package kube

import (
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Every amount Kubernetes can hold, in the form it writes it, is in range but for a binary-suffixed ±(2^63−1),
// which is taken for a capped one.
func TestQuantityInRangeKeepsWhatKubernetesWrites(t *testing.T) {
	amounts := []resource.Quantity{
		*resource.NewQuantity(math.MaxInt64, resource.DecimalSI),
		*resource.NewQuantity(-math.MaxInt64, resource.DecimalSI),
		*resource.NewQuantity(math.MaxInt64, resource.DecimalExponent),
		*resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI),
		*resource.NewScaledQuantity(math.MaxInt64, resource.Nano),
		*resource.NewScaledQuantity(1, resource.Nano),
		*resource.NewScaledQuantity(7, 18),
		resource.MustParse("9223372036854775807.999999999"),
		resource.MustParse("8191Pi"), resource.MustParse("7Ei"), resource.MustParse("0"),
	}
	for _, q := range amounts {
		if err := QuantityInRange(q); err != nil && q.Cmp(maxQuantity) <= 0 && q.Cmp(minQuantity) >= 0 {
			t.Errorf("%s: %v", q.String(), err)
		}
	}
}

// QuantityInRange at its bounds: ±(2^63−1) held, one more not, in every form; a binary-suffixed amount
// resource.ParseQuantity capped is named as such.
func TestQuantityInRangeAtTheBounds(t *testing.T) {
	for s, in := range map[string]bool{
		"9223372036854775807": true, "9223372036854775808": false,
		"-9223372036854775807": true, "-9223372036854775808": false,
		"9.223372036854775807E": true, "9.223372036854775808E": false,
		"9223372036854775807000m": true, "9223372036854775807001m": false,
		"9223372036854775.807k": true, "1e18": true, "1e19": false, "100E": false,
		"7Ei": true, "8191Pi": true, "8Ei": false, "8192Pi": false, "-8Ei": false, "9007199254740992Ki": false,
		"1e-9": true, "1e-10": true, "0": true,
	} {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := QuantityInRange(q) == nil; got != in {
			t.Errorf("QuantityInRange(%s) = %v, want in range %v", s, QuantityInRange(q), in)
		}
	}
	q := resource.MustParse("8Ei")
	if err := QuantityInRange(q); err == nil || !strings.Contains(err.Error(), "resource.ParseQuantity caps it there") {
		t.Errorf("8Ei: %v", err)
	}
	q = resource.MustParse("100E")
	if err := QuantityInRange(q); err == nil || err.Error() != "100E is beyond what a Kubernetes quantity holds (2^63−1 in magnitude)" {
		t.Errorf("100E: %v", err)
	}
}
