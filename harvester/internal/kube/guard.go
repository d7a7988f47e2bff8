package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
)

// Every object the driver decodes passes here before a resource.Quantity in it is parsed (see quantity.Form): the
// objects of the dynamic client in FromUnstructured, which holds the JSON as strings until it converts them, and
// the VMs and VMIs of KubeVirt's client in its decoder (guardedSerializer), which parses them as it decodes.

// guardedSerializer is a client's NegotiatedSerializer whose decoders hold the quantities of every object, and
// of every watch event's object, to quantity.Form before decoding it. runtime.NewClientNegotiator takes a
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
// hold what a quantity quantity.Form refuses would need (mayHoldCostlyQuantity): for the pre-flight's list of all
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
	if !quantity.Holds(t) || !mayHoldCostlyQuantity(data) {
		return nil
	}
	v, err := quantity.Decode(data)
	if err != nil {
		return nil // not JSON: the decoder says so
	}
	if err := quantity.Bound(v, t); err != nil {
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

// mayHoldCostlyQuantity reports whether JSON data may hold a string quantity.Form refuses: one with a run of more
// than quantity.MaxDigits digits or an e or E, a sign perhaps, and three digits or more. Characters escaped as
// \u00XX count as what they stand for when they could be one of those (a digit, a sign, e or E): such an escape
// makes the answer yes. One pass over the bytes; a yes only means the object is walked (quantity.Bound).
func mayHoldCostlyQuantity(data []byte) bool {
	run := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c >= '0' && c <= '9':
			if run++; run > quantity.MaxDigits {
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
