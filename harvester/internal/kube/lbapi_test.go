package kube

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ipPoolCRDFile is the IPPool CRD the test bed installs, mirrored from harvester-load-balancer (its header cites
// the upstream file and commit).
const ipPoolCRDFile = "../../../e2e/crds/mirrored/loadbalancer.harvesterhci.io_ippools.yaml"

// The mirrored CRD and the Go mirror types say the same: the group, version, kind and plural of IPPools, a
// cluster-scoped resource (it is listed without a namespace), and exactly the spec fields of IPPoolSpec with their
// JSON types; its required lists are upstream's (spec; spec.ranges; each range's subnet).
func TestIPPoolMirrorMatchesTheCRD(t *testing.T) {
	data, err := os.ReadFile(ipPoolCRDFile)
	if err != nil {
		t.Fatal(err)
	}
	crd := readCRD(t, data)
	s := crd.Spec
	if s.Group != IPPools.gvr.Group || s.Names.Kind != IPPools.gvk.Kind || s.Names.ListKind != IPPools.gvk.Kind+"List" ||
		s.Names.Plural != IPPools.gvr.Resource || crd.Metadata.Name != IPPools.gvr.Resource+"."+IPPools.gvr.Group {
		t.Errorf("CRD %s: group %s, kind %s (list %s), plural %s; the mirror says %v, %v", crd.Metadata.Name, s.Group, s.Names.Kind, s.Names.ListKind, s.Names.Plural, IPPools.gvk, IPPools.gvr)
	}
	if s.Scope != "Cluster" {
		t.Errorf("CRD scope %q, want Cluster (the pre-flight lists pools without a namespace)", s.Scope)
	}
	if len(s.Versions) != 1 || s.Versions[0].Name != IPPools.gvr.Version || !s.Versions[0].Served || !s.Versions[0].Storage {
		t.Fatalf("CRD versions %+v, want %s alone, served and stored", s.Versions, IPPools.gvr.Version)
	}
	root := s.Versions[0].Schema.OpenAPIV3Schema
	spec, _ := field(root, "spec")
	got := map[string]string{}
	schemaFields(spec, "spec", got)
	want := map[string]string{}
	goFields(reflect.TypeFor[IPPoolSpec](), "spec", want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the CRD's spec fields\n%v\nthe Go mirror's\n%v", got, want)
	}

	ranges, _ := field(spec, "ranges")
	rangeItem, _ := ranges["items"].(map[string]any)
	for _, r := range []struct {
		where  string
		schema map[string]any
		want   []string
	}{{"the object", root, []string{"spec"}}, {"spec", spec, []string{"ranges"}}, {"a range", rangeItem, []string{"subnet"}}} {
		if got := required(r.schema); !slices.Equal(got, r.want) {
			t.Errorf("%s requires %v, upstream %v", r.where, got, r.want)
		}
	}
}

// field is a property's schema.
func field(schema map[string]any, name string) (map[string]any, bool) {
	props, _ := schema["properties"].(map[string]any)
	f, ok := props[name].(map[string]any)
	return f, ok
}

func required(schema map[string]any) []string {
	var out []string
	list, _ := schema["required"].([]any)
	for _, r := range list {
		out = append(out, r.(string))
	}
	return out
}

// schemaFields records each property under path as path → its type ("array" fields' items as path[]).
func schemaFields(schema map[string]any, path string, out map[string]string) {
	typ, _ := schema["type"].(string)
	out[path] = typ
	switch typ {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			schemaFields(p.(map[string]any), path+"."+name, out)
		}
	case "array":
		items, _ := schema["items"].(map[string]any)
		schemaFields(items, path+"[]", out)
	}
}

// goFields records what schemaFields would for a Go type, by its JSON tags.
func goFields(t reflect.Type, path string, out map[string]string) {
	switch t.Kind() {
	case reflect.Pointer:
		goFields(t.Elem(), path, out)
	case reflect.String:
		out[path] = "string"
	case reflect.Int:
		out[path] = "integer"
	case reflect.Bool:
		out[path] = "boolean"
	case reflect.Float64:
		out[path] = "number"
	case reflect.Map:
		out[path] = "object"
	case reflect.Slice:
		out[path] = "array"
		goFields(t.Elem(), path+"[]", out)
	case reflect.Struct:
		out[path] = "object"
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			goFields(t.Field(i).Type, path+"."+name, out)
		}
	default:
		out[path] = "unmapped Go kind " + t.Kind().String()
	}
}
