package objects

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
)

// readVM reads a patched VM as strictly as the API server reads a request under strict field validation, in two
// steps. First, before anything decodes it into Go types, it walks the JSON against the VirtualMachine type:
//
//   - every field must be one of its type by its exact name (knownFields). KubeVirt reads a VMI spec
//     (spec.template.spec) with encoding/json itself (kubevirt.io/api core/v1 types.go,
//     VirtualMachineInstanceSpec.UnmarshalJSON), which drops unknown fields and matches names in any case, so
//     a strict decode cannot see "terminationgraceperiodseconds" there; comparing the VM read back with the
//     JSON cannot either when the value is empty, as the driver's own omitempty fields are dropped alike;
//   - every quantity, wherever the types hold one, in the strings KubeVirt parses as quantities (stringQuantities)
//     and in the annotations Harvester decodes (quantityAnnotations), must pass quantity.Form:
//     resource.ParseQuantity, which the decode calls, takes minutes on 1e-1000000000.
//
// Then it decodes it: the kind of every field (encoding/json, whose errors name the field), no duplicate field
// (sigs.k8s.io/json UnmarshalStrict). A problem names paths, never a value; at most maxUnknown unknown fields.
func readVM(doc []byte) (*kubevirtv1.VirtualMachine, error) {
	v, err := quantity.Decode(doc)
	if err != nil {
		return nil, config.DescribeJSONError(err)
	}
	if _, err := kjson.UnmarshalStrict(doc, new(any), kjson.DisallowDuplicateFields); err != nil {
		return nil, decodeError(err)
	}
	var unknown []string
	knownFields(v, vmType, "", &unknown)
	if err := unknownError(unknown); err != nil {
		return nil, err
	}
	if err := boundQuantities(v); err != nil {
		return nil, err
	}
	var out kubevirtv1.VirtualMachine
	if err := json.Unmarshal(doc, &out); err != nil {
		return nil, decodeError(err)
	}
	out = kubevirtv1.VirtualMachine{}
	strict, err := kjson.UnmarshalStrict(doc, &out)
	if err != nil {
		return nil, decodeError(err)
	}
	for _, e := range strict {
		var f kjson.FieldError
		if errors.As(e, &f) {
			unknown = append(unknown, f.FieldPath()) // a field given twice
		}
	}
	if err := unknownError(unknown); err != nil {
		return nil, err
	}
	return &out, nil
}

var vmType = reflect.TypeFor[kubevirtv1.VirtualMachine]()

// unknownError names at most maxUnknown of the unknown fields, nil for none.
func unknownError(unknown []string) error {
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	quoted := make([]string, 0, maxUnknown+1)
	for _, u := range unknown[:min(len(unknown), maxUnknown)] {
		quoted = append(quoted, strconv.Quote(u))
	}
	if n := len(unknown) - maxUnknown; n > 0 {
		quoted = append(quoted, fmt.Sprintf("and %d more", n))
	}
	return fmt.Errorf("it has fields KubeVirt does not know: %s", strings.Join(quoted, ", "))
}

// maxUnknown is how many unknown fields a problem names at most.
const maxUnknown = 10

// decodeError words why the patched VM does not decode, quoting no value of it: a field of the wrong kind
// (config.DescribeJSONError), a quantity that is none (resource.ParseQuantity's errors quote nothing); any other
// value's own parser, a time's or a duration's, quotes the value, which may be a secret.
func decodeError(err error) error {
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		return config.DescribeJSONError(err)
	case errors.Is(err, resource.ErrFormatWrong), errors.Is(err, resource.ErrNumeric), errors.Is(err, resource.ErrSuffix):
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return errors.New("a field holds a value not of the form its kind takes (a time, a duration…; the value is not shown: it may be a secret)")
}

// decodesAsFields are the types reachable from a VirtualMachine that decode themselves (json.Unmarshaler) from a
// JSON object holding their fields, as encoding/json would decode them: each is an alias's decode plus a
// clean-up (kubevirt.io/api core/v1 types.go, VirtualMachineInstanceSpec.UnmarshalJSON; schema.go,
// DHCPOptions.UnmarshalJSON and PodNetwork.UnmarshalJSON). Every other json.Unmarshaler has a JSON form of its
// own (a quantity, a time, an int-or-string, managed fields' raw JSON) whose insides are not fields:
// TestReadVMKnowsEveryUnmarshaler lists them.
var decodesAsFields = map[reflect.Type]bool{
	reflect.TypeFor[kubevirtv1.VirtualMachineInstanceSpec](): true,
	reflect.TypeFor[kubevirtv1.DHCPOptions]():                true,
	reflect.TypeFor[kubevirtv1.PodNetwork]():                 true,
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// knownFields adds to unknown the path of every key of v (JSON decoded into any) that is no field of its struct
// type by its exact name (quantity.Fields: as encoding/json reads it, a name in another case aside).
func knownFields(v any, t reflect.Type, path string, unknown *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok || reflect.PointerTo(t).Implements(unmarshalerType) && !decodesAsFields[t] {
			return
		}
		fields := map[string]reflect.Type{}
		for _, f := range quantity.Fields(t) {
			fields[f.Name] = f.Type
		}
		for k, fv := range m {
			if ft, ok := fields[k]; ok {
				knownFields(fv, ft, join(path, k), unknown)
			} else {
				*unknown = append(*unknown, join(path, k))
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for k, ev := range m {
				knownFields(ev, t.Elem(), path+"["+k+"]", unknown)
			}
		}
	case reflect.Slice, reflect.Array:
		if l, ok := v.([]any); ok {
			for i, ev := range l {
				knownFields(ev, t.Elem(), fmt.Sprintf("%s[%d]", path, i), unknown)
			}
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// quantityAnnotations are the annotations of a VM that Harvester decodes into quantities, each with the type it
// decodes: its webhook reads the claims of harvesterhci.io/volumeClaimTemplates, storage requests included, and
// parses harvesterhci.io/reservedMemory (harvester/harvester pkg/webhook/resources/virtualmachine/validator.go,
// mutator.go). A patch sending a costly one would stall Harvester's webhook, and this driver's admission tests.
var quantityAnnotations = map[string]reflect.Type{
	config.AnnotationVolumeClaimTemplates: reflect.TypeFor[[]corev1.PersistentVolumeClaim](),
	config.AnnotationReservedMemory:       reflect.TypeFor[resource.Quantity](),
}

// stringQuantities are the strings of a VM that KubeVirt parses as quantities: the hugepages' page size, in its
// admitter (kubevirt/kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go), its
// defaults, the launcher pod's resources and virt-launcher's converter. Each is a path of field names.
var stringQuantities = [][]string{{"spec", "template", "spec", "domain", "memory", "hugepages", "pageSize"}}

// boundQuantities holds the quantities of a patched VM, v, to quantity.Form: those its Go type holds, the strings
// of stringQuantities, and those of quantityAnnotations on the VM and its template. The error names the field.
// Field names are matched exactly: readVM refused any other case before.
func boundQuantities(v any) *quantity.Error {
	if err := quantity.Bound(v, vmType); err != nil {
		return err
	}
	for _, path := range stringQuantities {
		at := v
		for _, field := range path {
			m, _ := at.(map[string]any)
			at = m[field]
		}
		if s, ok := at.(string); ok {
			if err := quantity.Form(s); err != nil {
				err := err.(*quantity.Error)
				err.Field = strings.Join(path, ".")
				return err
			}
		}
	}
	vm, _ := v.(map[string]any)
	spec, _ := vm["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	for _, obj := range []struct {
		path string
		o    map[string]any
	}{{"metadata", vm}, {"spec.template.metadata", template}} {
		meta, _ := obj.o["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(quantityAnnotations)) {
			s, ok := annotations[key].(string)
			if !ok {
				continue
			}
			t := quantityAnnotations[key]
			var err *quantity.Error
			if t == reflect.TypeFor[resource.Quantity]() {
				err = quantity.Bound(s, t)
			} else if decoded, jerr := quantity.Decode([]byte(s)); jerr == nil {
				err = quantity.Bound(decoded, t) // not JSON: Harvester refuses it, at no cost
			}
			if err != nil {
				field := obj.path + ".annotations[" + key + "]"
				if err.Field != "" && !strings.HasPrefix(err.Field, "[") {
					field += "."
				}
				err.Field = field + err.Field
				return err
			}
		}
	}
	return nil
}
