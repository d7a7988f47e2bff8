package objects

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// typePaths lists the paths, as steps, to the values within a value of type t that pick chooses by their type and
// the last step's name (not walking into them): a field's name, "[]" for a list's element, "[memory]" for a map's value. It walks
// only into the types walk allows, and into none within itself.
func typePaths(t reflect.Type, prefix []string, pick func(t reflect.Type, name string) bool, walk func(t reflect.Type) bool, seen map[reflect.Type]bool) [][]string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(prefix) > 0 && pick(t, prefix[len(prefix)-1]) {
		return [][]string{slices.Clone(prefix)}
	}
	if seen[t] || !walk(t) {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	var out [][]string
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		out = typePaths(t.Elem(), append(prefix, "[]"), pick, walk, seen)
	case reflect.Map:
		out = typePaths(t.Elem(), append(prefix, "[memory]"), pick, walk, seen)
	case reflect.Struct:
		for _, f := range quantity.Fields(t) {
			out = append(out, typePaths(f.Type, append(slices.Clone(prefix), f.Name), pick, walk, seen)...)
		}
	}
	return out
}

// quantityPaths lists where a VirtualMachine holds a resource.Quantity (typePaths).
func quantityPaths() [][]string {
	isQuantity := func(t reflect.Type, _ string) bool { return t == reflect.TypeFor[resource.Quantity]() }
	return typePaths(vmType, nil, isQuantity, quantity.Holds, map[reflect.Type]bool{})
}

// mergePatchAt is a merge patch setting value at path (quantityPaths' steps; a list becomes a list of one), and
// the path as a problem names it.
func mergePatchAt(path []string, value any) (patch, named string) {
	v := value
	for i := len(path) - 1; i >= 0; i-- {
		switch s := path[i]; {
		case s == "[]":
			v = []any{v}
		case strings.HasPrefix(s, "["):
			v = map[string]any{strings.Trim(s, "[]"): v}
		default:
			v = map[string]any{s: v}
		}
	}
	for _, s := range path {
		switch {
		case s == "[]":
			named += "[0]"
		case strings.HasPrefix(s, "["):
			named += s
		case named == "":
			named = s
		default:
			named += "." + s
		}
	}
	b, _ := json.Marshal(v)
	return string(b), named
}

// Every quantity of the patched VM passes quantity.Form before anything parses it, wherever KubeVirt's
// VirtualMachine type holds one: the paths are found here by reflection over the pinned kubevirt.io/api, so a
// field a new version adds is tested too. The problem names the flag and the path, never the value.
func TestVMPatchBoundsEveryQuantity(t *testing.T) {
	paths := quantityPaths()
	if len(paths) < 10 {
		t.Fatalf("only %d quantities found in a VirtualMachine: %v", len(paths), paths)
	}
	for _, path := range paths {
		patch, named := mergePatchAt(path, "1e-1000")
		t.Run(named, func(t *testing.T) {
			_, err := patchedVM(t, config.FlagVMPatch, patch)
			want := "--harvester-vm-patch: the patched VM holds a quantity the driver will not parse: " + named + " has a decimal exponent beyond ±99"
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "1e-1000") {
				t.Errorf("%s: %v\nwant %s", patch, err, want)
			}
		})
	}
}

// The quantities that would cost resource.ParseQuantity minutes, at several places and in several forms — the
// issue's reproduction, a JSON number (Quantity.UnmarshalJSON parses its text), the annotations Harvester decodes
// — are refused at once, without the value; one in a field of another case is an unknown field, never parsed.
func TestVMPatchRefusesCostlyQuantities(t *testing.T) {
	vct := `[{"metadata":{"name":"m1-disk-0-abcde"},"spec":{"resources":{"requests":{"storage":"1e-1000000000"}}}}]`
	tests := []struct{ name, patch, want string }{
		{"the issue's reproduction", `{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"1e-1000000000"}}}}}}}`,
			"spec.template.spec.domain.resources.requests[memory] has a decimal exponent beyond ±99"},
		{"a limit", `{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"cpu":"1e1000000000"}}}}}}}`,
			"spec.template.spec.domain.resources.limits[cpu] has a decimal exponent beyond ±99"},
		{"a JSON number", `{"spec":{"template":{"spec":{"domain":{"memory":{"guest":1e-1000000000}}}}}}`,
			"spec.template.spec.domain.memory.guest has a decimal exponent beyond ±99"},
		{"an empty disk, by JSON patch", `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"scratch","emptyDisk":{"capacity":"1` + strings.Repeat("0", 100) + `"}}}]`,
			"spec.template.spec.volumes[2].emptyDisk.capacity has a run of more than 64 digits"},
		{"the memory overhead", `{"spec":{"template":{"spec":{"domain":{"memory":{"reservedOverhead":{"addedOverhead":"0e500"}}}}}}}`,
			"spec.template.spec.domain.memory.reservedOverhead.addedOverhead has a decimal exponent"},
		{"the hugepages' page size, a string KubeVirt parses", `{"spec":{"template":{"spec":{"domain":{"memory":{"hugepages":{"pageSize":"1e-1000000000"}}}}}}}`,
			"spec.template.spec.domain.memory.hugepages.pageSize has a decimal exponent"},
		{"the claims annotation", `{"metadata":{"annotations":{"harvesterhci.io/volumeClaimTemplates":` + strconvQuote(vct) + `}}}`,
			"metadata.annotations[harvesterhci.io/volumeClaimTemplates][0].spec.resources.requests[storage] has a decimal exponent"},
		{"the reserved memory annotation", `{"metadata":{"annotations":{"harvesterhci.io/reservedMemory":"1e-1000000000"}}}`,
			"metadata.annotations[harvesterhci.io/reservedMemory] has a decimal exponent"},
		{"the template's reserved memory annotation", `{"spec":{"template":{"metadata":{"annotations":{"harvesterhci.io/reservedMemory":"1e-1000000000"}}}}}`,
			"spec.template.metadata.annotations[harvesterhci.io/reservedMemory] has a decimal exponent"},
		{"a field in another case", `{"spec":{"template":{"spec":{"domain":{"Resources":{"requests":{"memory":"1e-1000000000"}}}}}}}`,
			`the patched VM is not a KubeVirt VirtualMachine: it has fields KubeVirt does not know: "spec.template.spec.domain.Resources"`},
	}
	for s, why := range hostile.Quantities {
		if len(s) < config.MaxVMPatchSize/2 {
			tests = append(tests, struct{ name, patch, want string }{"hostile " + s[:min(len(s), 20)],
				`{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":` + strconvQuote(s) + `}}}}}}}`,
				"spec.template.spec.domain.resources.limits[memory] has a " + why})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := patchedVM(t, config.FlagVMPatch, tt.patch)
			if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch: ") || !strings.Contains(err.Error(), tt.want) ||
				strings.Contains(err.Error(), "1e-1000000000") || strings.Contains(err.Error(), "000000") {
				t.Fatalf("want a problem of --harvester-vm-patch containing %q, without the value; got %v", tt.want, err)
			}
		})
	}
	// The forms Kubernetes writes pass, in the annotations too.
	if _, err := patchedVM(t, config.FlagVMPatch, `{"metadata":{"annotations":{"harvesterhci.io/reservedMemory":"256Mi"}},`+
		`"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":"1e9"}},"memory":{"guest":4294967296,"hugepages":{"pageSize":"2Mi"}}}}}}}`); err != nil {
		t.Errorf("ordinary quantities: %v", err)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A field in the wrong case is refused whatever its value, at any depth: KubeVirt reads spec.template.spec with
// encoding/json, which would put "terminationgraceperiodseconds": 0 into terminationGracePeriodSeconds (the guest
// killed at once on every stop) and "evictionstrategy": "" over the driver's LiveMigrateIfPossible.
func TestVMPatchRefusesAFieldInTheWrongCaseWhateverItsValue(t *testing.T) {
	tests := []struct{ name, patch, field string }{
		{"a zero", `{"spec":{"template":{"spec":{"terminationgraceperiodseconds":0}}}}`, "spec.template.spec.terminationgraceperiodseconds"},
		{"an empty string", `{"spec":{"template":{"spec":{"evictionstrategy":""}}}}`, "spec.template.spec.evictionstrategy"},
		{"false, in a device", `{"spec":{"template":{"spec":{"domain":{"devices":{"autoAttachPodInterface":false}}}}}}`,
			"spec.template.spec.domain.devices.autoAttachPodInterface"},
		{"an empty object", `{"spec":{"template":{"spec":{"Domain":{}}}}}`, "spec.template.spec.Domain"},
		{"an empty list", `{"spec":{"template":{"spec":{"Volumes":[]}}}}`, "spec.template.spec.Volumes"},
		{"null, by JSON patch", `[{"op":"add","path":"/spec/template/spec/hostName","value":null}]`, "spec.template.spec.hostName"},
		{"a zero in a list's element", `[{"op":"add","path":"/spec/template/spec/domain/devices/disks/0/bootorder","value":0}]`,
			"spec.template.spec.domain.devices.disks[0].bootorder"},
		{"a zero in the CPU", `{"spec":{"template":{"spec":{"domain":{"cpu":{"Cores":0}}}}}}`, "spec.template.spec.domain.cpu.Cores"},
		{"outside the VMI spec", `{"spec":{"template":{"metadata":{"Labels":{}}}}}`, "spec.template.metadata.Labels"},
		{"a Kelvin sign", `{"spec":{"template":{"spec":{"domain":{"cloc\u212a":{}}}}}}`, "spec.template.spec.domain.cloc\u212a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := patchedVM(t, config.FlagVMPatch, tt.patch)
			want := `the patched VM is not a KubeVirt VirtualMachine: it has fields KubeVirt does not know: "` + tt.field + `"`
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("want %s, got %v", want, err)
			}
		})
	}
	// The fields by their names, empty, are the user's to set.
	vm, err := patchedVM(t, config.FlagVMPatch, `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":0,"hostname":"","domain":{"devices":{"autoattachPodInterface":false}}}}}}`)
	if err != nil || *vm.Spec.Template.Spec.TerminationGracePeriodSeconds != 0 {
		t.Errorf("fields by their names: %v", err)
	}
}

// readVM walks into the types that decode themselves only when they decode their fields as encoding/json does
// (decodesAsFields); every other json.Unmarshaler a VirtualMachine holds has a JSON form of its own. A new one,
// in a newer kubevirt.io/api, must be put on one side or the other.
func TestReadVMKnowsEveryUnmarshaler(t *testing.T) {
	ownForm := []reflect.Type{reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.FieldsV1](), reflect.TypeFor[resource.Quantity](), reflect.TypeFor[intstr.IntOrString]()}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		if reflect.PointerTo(typ).Implements(unmarshalerType) && !decodesAsFields[typ] && !slices.Contains(ownForm, typ) {
			t.Errorf("%s decodes itself: add it to decodesAsFields if it decodes its fields as encoding/json does, else to this test's list", typ)
		}
		switch typ.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			walk(typ.Elem())
		case reflect.Struct:
			for _, f := range quantity.Fields(typ) {
				walk(f.Type)
			}
		case reflect.Interface:
			t.Errorf("%s: an interface's value has no fields readVM can know", typ)
		}
	}
	walk(vmType)
	for typ := range decodesAsFields {
		if !seen[typ] {
			t.Errorf("%s is in decodesAsFields but no VirtualMachine holds it", typ)
		}
	}
}
