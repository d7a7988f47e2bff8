package quantity

import (
	"errors"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// Form refuses each of the quantities that cost resource.ParseQuantity, or the arithmetic after it, work without
// bound, saying why.
func TestFormRefusesWhatCostsUnboundedWork(t *testing.T) {
	for s, why := range hostile.Quantities {
		err := Form(s)
		var qe *Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), why) || len(err.Error()) > 300 {
			t.Errorf("Form(%.30q): %.300v; want it refused: %s", s, err, why)
		}
	}
}

// Every amount Kubernetes can hold, in the form it writes it, and the forms people write, pass Form.
func TestFormKeepsWhatKubernetesWrites(t *testing.T) {
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
		if err := Form(q.String()); err != nil {
			t.Errorf("%s as Kubernetes writes it: %v", q.String(), err)
		}
	}
	for _, s := range []string{"10Gi", "500m", "1n", "1.5", ".5", "1e3", "1E", "1Ei", "2E", "1e-9", "123e-72", "1e83", "1e99", "1e-99",
		"0." + strings.Repeat("0", 63) + "1", strings.Repeat("9", 64) + "." + strings.Repeat("9", 64) + "e-99"} {
		if err := Form(s); err != nil {
			t.Errorf("Form(%q): %v", s, err)
		}
	}
}

// A value's quote in the error is cut short: a refused string may be megabytes long.
func TestErrorQuotesLittle(t *testing.T) {
	err := Form(strings.Repeat("1", 1000))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), `"`+strings.Repeat("1", 37)+`..."`) {
		t.Errorf("%v", err)
	}
}
