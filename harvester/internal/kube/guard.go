package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every object the driver decodes passes here before a resource.Quantity in it is parsed (see QuantityForm): the
// objects of the dynamic client in FromUnstructured, which holds the JSON as strings until it converts them, and
// the VMs and VMIs of KubeVirt's client in its decoder (guardedSerializer), which parses them as it decodes.

// boundQuantities holds every string of v (JSON as decoded into any) that a value of type t would parse as a
// resource.Quantity to QuantityForm. The error names the field.
func boundQuantities(v any, t reflect.Type) *QuantityError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !holdsQuantities(t) {
		return nil
	}
	if t == quantityType {
		if s, ok := v.(string); ok {
			if err := QuantityForm(s); err != nil {
				return err.(*QuantityError)
			}
		}
		return nil // null, or a JSON number: float64 keeps its exponent within ±308, int64 its digits within 19
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for i := range t.NumField() {
			name, inline := jsonField(t.Field(i))
			switch {
			case inline:
				if err := boundQuantities(m, t.Field(i).Type); err != nil {
					return err
				}
			case name != "":
				if fv, ok := m[name]; ok {
					if err := boundQuantities(fv, t.Field(i).Type); err != nil {
						return err.within(name)
					}
				}
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for k, ev := range m {
			if err := boundQuantities(ev, t.Elem()); err != nil {
				return err.within("[" + k + "]")
			}
		}
	case reflect.Slice, reflect.Array:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, ev := range l {
			if err := boundQuantities(ev, t.Elem()); err != nil {
				return err.within(fmt.Sprintf("[%d]", i))
			}
		}
	}
	return nil
}

// jsonField is the name under which encoding/json reads a struct field, or inline for an embedded one whose
// fields are read in place ("" for a field it skips).
func jsonField(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && (f.Anonymous || strings.Contains(","+opts+",", ",inline,")) {
		return "", true
	}
	if !f.IsExported() {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	// quantityTypes remembers, by type, whether its values can hold a Quantity.
	quantityTypes sync.Map
)

// holdsQuantities reports whether a value of type t can hold a resource.Quantity, so that objects without any
// (Secrets, Settings, …) are not walked at all.
func holdsQuantities(t reflect.Type) bool {
	if v, ok := quantityTypes.Load(t); ok {
		return v.(bool)
	}
	holds := typeHolds(t, map[reflect.Type]bool{})
	quantityTypes.Store(t, holds)
	return holds
}

func typeHolds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == quantityType {
		return true
	}
	if seen[t] {
		return false // a type within itself: what it holds is decided where it was first met
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return typeHolds(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && typeHolds(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// guardedSerializer is a client's NegotiatedSerializer whose decoders hold the quantities of every object, and
// of every watch event's object, to QuantityForm before decoding it. runtime.NewClientNegotiator takes a
// response's decoder and a watch's object decoder from DecoderToVersion (k8s.io/apimachinery pkg/runtime
// negotiate.go, clientNegotiator.Decoder and StreamDecoder).
type guardedSerializer struct {
	runtime.NegotiatedSerializer
	scheme *runtime.Scheme
}

func (s guardedSerializer) DecoderToVersion(d runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return guardedDecoder{Decoder: s.NegotiatedSerializer.DecoderToVersion(d, gv), scheme: s.scheme}
}

type guardedDecoder struct {
	runtime.Decoder
	scheme *runtime.Scheme
}

// Decode decodes data once more into plain JSON values first, when the object can hold a quantity and its bytes
// hold what a quantity QuantityForm refuses would need (mayHoldCostlyQuantity): for the pre-flight's list of all
// VMIs, the one large response of this client, that second decode would take as long as the first.
func (d guardedDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if err := d.bound(data, into); err != nil {
		return nil, nil, err
	}
	return d.Decoder.Decode(data, defaults, into)
}

func (d guardedDecoder) bound(data []byte, into runtime.Object) error {
	var t reflect.Type
	if into != nil {
		t = reflect.TypeOf(into)
	} else {
		// A watch event's object: its type is its kind's in the scheme.
		var meta struct{ APIVersion, Kind string }
		if json.Unmarshal(data, &meta) != nil {
			return nil // not JSON: the decoder says so
		}
		obj, err := d.scheme.New(schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind))
		if err != nil {
			return nil
		}
		t = reflect.TypeOf(obj)
	}
	if !holdsQuantities(t) || !mayHoldCostlyQuantity(data) {
		return nil
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	if err := boundQuantities(v, t); err != nil {
		what := t.Elem().Name()
		if m, ok := v.(map[string]any); ok {
			md, _ := m["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			name, _ := md["name"].(string)
			what = objectName(what, ns, name)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// objectName names an object of kind: "VirtualMachine team-a/vm1", "Node n1", or the kind alone for a list.
func objectName(kind, namespace, name string) string {
	switch {
	case name == "":
		return kind
	case namespace == "":
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// mayHoldCostlyQuantity reports whether JSON data may hold a string QuantityForm refuses: one with a run of more
// than MaxQuantityDigits digits or an e or E, a sign perhaps, and three digits or more. Characters escaped as
// \u00XX count as what they stand for when they could be one of those (a digit, a sign, e or E): such an escape
// makes the answer yes. One pass over the bytes; a yes only means the object is walked (boundQuantities).
func mayHoldCostlyQuantity(data []byte) bool {
	run := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c >= '0' && c <= '9':
			if run++; run > MaxQuantityDigits {
				return true
			}
			continue
		case c == 'e' || c == 'E':
			j := i + 1
			if j < len(data) && (data[j] == '+' || data[j] == '-') {
				j++
			}
			if j+2 < len(data) && isDigit(data[j]) && isDigit(data[j+1]) && isDigit(data[j+2]) {
				return true
			}
		case c == '\\' && i+5 < len(data) && data[i+1] == 'u' && data[i+2] == '0' && data[i+3] == '0':
			switch strings.ToLower(string(data[i+4 : i+6])) {
			case "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "2b", "2d", "45", "65":
				return true
			}
		}
		run = 0
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
