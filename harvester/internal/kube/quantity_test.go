package kube

import (
	"errors"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// hostileQuantities cost resource.ParseQuantity, or the arithmetic after it, work without bound; QuantityForm
// refuses each, saying why.
var hostileQuantities = map[string]string{
	"1e-1000000000":                         "decimal exponent beyond ±99", // the parse divides by 10^(10^9)
	"1e1000000000":                          "decimal exponent beyond ±99", // Sub and Cmp build 10^(10^9)
	"1E+1000000000":                         "decimal exponent beyond ±99",
	" 1e1000000000 ":                        "decimal exponent beyond ±99", // Quantity.UnmarshalJSON trims spaces
	"-1.5e-100":                             "decimal exponent beyond ±99",
	"0e500":                                 "decimal exponent beyond ±99", // 0, with a scale that costs the next Sub
	"1e0000000000000000000000000000000100":  "decimal exponent beyond ±99",
	"1" + strings.Repeat("0", 65):           "run of more than 64 digits",
	"0." + strings.Repeat("0", 1<<20) + "1": "run of more than 64 digits",
	strings.Repeat("9", 16<<20):             "run of more than 64 digits",
}

func TestQuantityFormRefusesWhatCostsUnboundedWork(t *testing.T) {
	for s, why := range hostileQuantities {
		err := QuantityForm(s)
		var qe *QuantityError
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), why) || len(err.Error()) > 300 {
			t.Errorf("QuantityForm(%.30q): %.300v; want it refused: %s", s, err, why)
		}
	}
}

// Every amount Kubernetes can hold, in the form it writes it, and the forms people write, pass QuantityForm.
func TestQuantityFormKeepsWhatKubernetesWrites(t *testing.T) {
	amounts := []resource.Quantity{
		*resource.NewQuantity(math.MaxInt64, resource.DecimalSI),
		*resource.NewQuantity(math.MaxInt64, resource.BinarySI),
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
		if err := QuantityForm(q.String()); err != nil {
			t.Errorf("%s as Kubernetes writes it: %v", q.String(), err)
		}
		if err := QuantityInRange(q); err != nil && q.Cmp(maxQuantity) <= 0 && q.Cmp(minQuantity) >= 0 && q.Format != resource.BinarySI {
			t.Errorf("%s: %v", q.String(), err)
		}
	}
	for _, s := range []string{"10Gi", "500m", "1n", "1.5", ".5", "1e3", "1E", "1Ei", "2E", "1e-9", "123e-72", "1e83", "1e99", "1e-99",
		"0." + strings.Repeat("0", 63) + "1", strings.Repeat("9", 64) + "." + strings.Repeat("9", 64) + "e-99"} {
		if err := QuantityForm(s); err != nil {
			t.Errorf("QuantityForm(%q): %v", s, err)
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

// A value's quote in the error is cut short: a refused string may be megabytes long.
func TestQuantityErrorQuotesLittle(t *testing.T) {
	err := QuantityForm(strings.Repeat("1", 1000))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), `"`+strings.Repeat("1", 37)+`..."`) {
		t.Errorf("%v", err)
	}
}
