package quantity

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Bound finds a quantity wherever a decoder would read one: by the exact name, and by a name in another case,
// which encoding/json reads too (KubeVirt decodes a VMI spec with it: VirtualMachineInstanceSpec.UnmarshalJSON).
func TestBoundReachesWhatTheDecodersRead(t *testing.T) {
	vmi := reflect.TypeFor[kubevirtv1.VirtualMachineInstance]()
	for _, tc := range []struct{ name, doc, field string }{
		{"exact names", `{"spec":{"domain":{"resources":{"requests":{"memory":"1e-1000"}}}}}`, "spec.domain.resources.requests[memory]"},
		{"a field in another case", `{"spec":{"domain":{"Resources":{"requests":{"memory":"1e-1000"}}}}}`, "spec.domain.Resources.requests[memory]"},
		{"all in capitals", `{"spec":{"DOMAIN":{"MEMORY":{"GUEST":"1e-1000"}}}}`, "spec.DOMAIN.MEMORY.GUEST"},
		{"a Kelvin sign for a k", `{"spec":{"domain":{"memory":{"hugepages":{}},"devices":{}},"volumes":[{"name":"a","emptyDis\u212a":{"capacity":"1e-1000"}}]}}`,
			"spec.volumes[0].emptyDis\u212a.capacity"},
		{"an embedded struct's field", `{"spec":{"volumes":[{"name":"a","emptyDisk":{"capacity":"1e-1000"}}]}}`, "spec.volumes[0].emptyDisk.capacity"},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		err := Bound(v, vmi)
		if err == nil || err.Field != tc.field || !strings.Contains(err.Reason, "decimal exponent beyond ±99") {
			t.Errorf("%s: %v, want the field %s", tc.name, err, tc.field)
		}
		// encoding/json does read it there: the decoder would have parsed it.
		var typed kubevirtv1.VirtualMachineInstance
		if err := json.Unmarshal([]byte(strings.ReplaceAll(tc.doc, "1e-1000", "3Gi")), &typed); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b, _ := json.Marshal(typed.Spec); !strings.Contains(string(b), `"3Gi"`) {
			t.Errorf("%s: encoding/json does not read the quantity: the case is no test", tc.name)
		}
	}
}

// Fields names what encoding/json reads into a struct, embedded structs and their conflicts included: the names
// json.Marshal writes for a value with every field set.
func TestFieldsAreEncodingJSONs(t *testing.T) {
	type Inner struct {
		A     string `json:"a"`
		Clash string // at the same depth as Other.Clash: no field
		Deep  string `json:"deep"`
	}
	type Other struct {
		Clash  string
		Tagged string `json:"tagged"`
	}
	type Tagged struct {
		Tagged string // loses to the tagged one of the same depth
	}
	type outer struct {
		Inner
		*Other
		Tagged
		Deep     string `json:"deep"` // shallower than Inner.Deep
		Named    Inner  `json:"named"`
		Skipped  string `json:"-"`
		unexport string
		Q        resource.Quantity `json:"q,omitempty"`
	}
	v := outer{Inner: Inner{"a", "c", "d"}, Other: &Other{"c", "t"}, Tagged: Tagged{"x"}, Deep: "d", Skipped: "s", unexport: "u", Q: resource.MustParse("1")}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	var want, got []string
	for k := range m {
		want = append(want, k)
	}
	for _, f := range Fields(reflect.TypeFor[outer]()) {
		got = append(got, f.Name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("Fields: %v, encoding/json writes %v", got, want)
	}
}
