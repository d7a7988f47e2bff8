package quantity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bound holds every string of v (JSON as decoded into any, numbers as json.Number: see Decode) that a value of
// type t would parse as a resource.Quantity to Form: the first one refused is the error, naming its field. It walks v as the decoders
// read it into t, but for a struct's fields a little wider: a key reaches every field whose name it matches in any
// case, since encoding/json matches names case-insensitively and KubeVirt decodes a VMI spec with it
// (kubevirt.io/api core/v1 types.go, VirtualMachineInstanceSpec.UnmarshalJSON), where the API server's decoders
// and sigs.k8s.io/json match exactly.
func Bound(v any, t reflect.Type) *Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !Holds(t) {
		return nil
	}
	if t == quantityType {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case json.Number: // Quantity.UnmarshalJSON parses a number's text as it parses a string
			s = string(v)
		default:
			return nil // null, or a number decoded as int64 or float64, whose text is gone: no costly quantity
		}
		if err := Form(s); err != nil {
			return err.(*Error)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := Fields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) { // the same object names the same field first
			for _, f := range fields {
				if !strings.EqualFold(f.Name, k) {
					continue
				}
				if err := Bound(m[k], f.Type); err != nil {
					return err.within(k)
				}
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(m)) { // the same object names the same field first
			if err := Bound(m[k], t.Elem()); err != nil {
				return err.within("[" + k + "]")
			}
		}
	case reflect.Slice, reflect.Array:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, ev := range l {
			if err := Bound(ev, t.Elem()); err != nil {
				return err.within(fmt.Sprintf("[%d]", i))
			}
		}
	}
	return nil
}

// Decode decodes JSON data for Bound: numbers stay json.Number, with their text. A number the decoders read
// into a Quantity is parsed from its text, which 1e-1000000000 is; as a float64 it would be 0.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Field is a field encoding/json reads into a struct: its name in JSON and its Go type.
type Field struct {
	Name string
	Type reflect.Type
}

// fieldsCache remembers Fields by type.
var fieldsCache sync.Map

// Fields lists the fields encoding/json reads into struct type t, by their JSON names, as its typeFields finds
// them (encoding/json encode.go): the exported fields but those tagged "-", named by their tag or else their Go
// name, and the fields of embedded structs without a tag name in place of the struct, where the shallowest field
// of a name wins, or the one tagged among the shallowest; a name two fields share at the same depth is no field.
func Fields(t reflect.Type) []Field {
	if f, ok := fieldsCache.Load(t); ok {
		return f.([]Field)
	}
	type found struct {
		Field
		depth  int
		tagged bool
	}
	byName := map[string][]found{}
	var names []string
	type level struct {
		t     reflect.Type
		depth int
	}
	queue, seen := []level{{t, 0}}, map[reflect.Type]bool{}
	for len(queue) > 0 {
		l := queue[0]
		queue = queue[1:]
		if seen[l.t] {
			continue
		}
		seen[l.t] = true
		for i := range l.t.NumField() {
			sf := l.t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
				if name == "" && ft.Kind() == reflect.Struct {
					queue = append(queue, level{ft, l.depth + 1})
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			if _, ok := byName[name]; !ok {
				names = append(names, name)
			}
			byName[name] = append(byName[name], found{Field{name, sf.Type}, l.depth, tagged})
		}
	}
	var out []Field
	for _, name := range names {
		fs := byName[name]
		top := fs[0].depth
		for _, f := range fs {
			top = min(top, f.depth)
		}
		var shallowest, tagged []found
		for _, f := range fs {
			if f.depth == top {
				shallowest = append(shallowest, f)
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
		}
		switch {
		case len(shallowest) == 1:
			out = append(out, shallowest[0].Field)
		case len(tagged) == 1:
			out = append(out, tagged[0].Field)
		}
	}
	fieldsCache.Store(t, out)
	return out
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	// quantityTypes remembers, by type, whether its values can hold a Quantity.
	quantityTypes sync.Map
)

// Holds reports whether a value of type t can hold a resource.Quantity, so that objects without any (Secrets,
// Settings, …) are not walked at all.
func Holds(t reflect.Type) bool {
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
		for _, f := range Fields(t) {
			if typeHolds(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
