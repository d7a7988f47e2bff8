package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"
)

// Bounds of --harvester-vm-patch. A VM patch sets a few fields; 64 KiB and 256 operations hold hundreds of them.
// What a patch makes of the VM is bounded by the builders (objects.MaxPatchedVM).
const (
	MaxVMPatchSize       = 64 << 10
	MaxVMPatchOperations = 256
)

// VMPatchKind is how a VM patch is applied.
type VMPatchKind int

const (
	// MergePatch is a JSON merge patch (RFC 7386): a JSON object merged into the VM, null removing a field.
	MergePatch VMPatchKind = iota
	// JSONPatch is a JSON patch (RFC 6902): a JSON list of operations applied in order.
	JSONPatch
)

// String names the kind as the RFCs do.
func (k VMPatchKind) String() string {
	if k == JSONPatch {
		return "JSON patch"
	}
	return "JSON merge patch"
}

// VMPatch is --harvester-vm-patch: a change the user makes to the VM the driver builds, for the KubeVirt and
// Harvester fields no flag covers (harvester/harvester#8408: people edit the VMs Rancher made by hand, and lose the
// edit when the machine is replaced). Parsing checks its form; the builders apply it to the VM and refuse what
// does not apply or changes the driver's own parts (objects.Build). It may hold anything a VM holds, secrets
// included: problems name paths and operations by their place, never a value.
type VMPatch struct {
	Kind VMPatchKind
	// Data is the patch as JSON: an object (MergePatch) or a list of operations (JSONPatch).
	Data []byte
}

// jsonPatchOps are the operations of RFC 6902 (section 4) and the fields each needs besides op and path.
var jsonPatchOps = map[string][]string{
	"add": {"value"}, "remove": nil, "replace": {"value"}, "move": {"from"}, "copy": {"from"}, "test": {"value"},
}

// vmPatchExample is what the problems of a patch that is neither kind show.
const vmPatchExample = `a JSON merge patch (an object, e.g. {"spec":{"template":{"spec":{"terminationGracePeriodSeconds":60}}}}) or a JSON patch (a list of operations, e.g. [{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"ml"}])`

// parseVMPatch reads --harvester-vm-patch: JSON, base64 of JSON or a file holding it (readJSONDocument), at most
// MaxVMPatchSize. An object is a merge patch and a list a JSON patch, checked as the API server checks a patch
// under strict field validation (k8s.io/apiserver pkg/endpoints/handlers/patch.go, applyJSPatch: no duplicate
// fields; for a JSON patch, each operation's fields) and bounded like it (there at 10,000 operations, here at
// MaxVMPatchOperations). "" is no patch.
func parseVMPatch(p *Problems, raw string) *VMPatch {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	data, err := readJSONDocument(raw, MaxVMPatchSize, looksLikeJSONDocument)
	if err != nil {
		p.Addf(FlagVMPatch, "%v", err)
		return nil
	}
	data = bytes.TrimSpace(data)
	kind := MergePatch
	switch {
	case bytes.HasPrefix(data, []byte("[")):
		kind = JSONPatch
	case !bytes.HasPrefix(data, []byte("{")):
		p.Addf(FlagVMPatch, "must be %s", vmPatchExample)
		return nil
	}
	if err := json.Unmarshal(data, new(any)); err != nil {
		p.Addf(FlagVMPatch, "%v; want %s", DescribeJSONError(err), vmPatchExample)
		return nil
	}
	found := len(p.List)
	strict, _ := kjson.UnmarshalStrict(data, new(any), kjson.DisallowDuplicateFields) // valid JSON: no error
	for _, e := range strict {
		p.Addf(FlagVMPatch, "has %v", e) // duplicate field "spec.running"
	}
	if kind == JSONPatch {
		var ops []map[string]json.RawMessage
		if json.Unmarshal(data, &ops) != nil {
			p.Addf(FlagVMPatch, "is a list of something else than operations (JSON objects with op and path); want %s", vmPatchExample)
			return nil
		}
		checkJSONPatch(p, ops)
	}
	if len(p.List) > found {
		return nil
	}
	return &VMPatch{Kind: kind, Data: data}
}

func looksLikeJSONDocument(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b)
}

// checkJSONPatch checks each operation of a JSON patch: a known op with the fields it needs, paths that are JSON
// pointers (RFC 6901), no other fields; and their number.
func checkJSONPatch(p *Problems, ops []map[string]json.RawMessage) {
	if len(ops) > MaxVMPatchOperations {
		p.Addf(FlagVMPatch, "has %d operations, more than the %d a VM patch may have", len(ops), MaxVMPatchOperations)
		return
	}
	for i, op := range ops {
		var name string
		_ = json.Unmarshal(op["op"], &name) // not a string: name stays "", no op
		if _, known := jsonPatchOps[name]; !known {
			p.Addf(FlagVMPatch, "operation %d: op must be add, remove, replace, move, copy or test", i)
			continue
		}
		needs := append([]string{"op", "path"}, jsonPatchOps[name]...)
		for _, field := range needs {
			if _, ok := op[field]; !ok {
				p.Addf(FlagVMPatch, "operation %d (%s) needs %s", i, name, field)
			}
		}
		for field, value := range op {
			switch {
			case !slices.Contains(needs, field):
				p.Addf(FlagVMPatch, "operation %d (%s) has an unknown field %q (an operation has op, path, and from or value as its op needs)", i, name, field)
			case field == "path" || field == "from":
				if err := checkJSONPointer(value); err != nil {
					p.Addf(FlagVMPatch, "operation %d (%s): %s %v", i, name, field, err)
				}
			}
		}
	}
}

// checkJSONPointer checks that a path or from is a JSON pointer (RFC 6901): "" (the whole VM) or "/" and
// reference tokens, "~" only as "~0" or "~1". gopkg.in/evanphx/json-patch.v4, which applies the patch, would
// read a path without its leading "/" as a top-level field.
func checkJSONPointer(raw json.RawMessage) error {
	var ptr string
	if err := json.Unmarshal(raw, &ptr); err != nil {
		return fmt.Errorf("must be a JSON string")
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		return fmt.Errorf("must be a JSON pointer: \"\" for the whole VM, or starting with /, e.g. /spec/template/spec/evictionStrategy")
	}
	for i := strings.IndexByte(ptr, '~'); i >= 0; i = strings.IndexByte(ptr, '~') {
		if i+1 == len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1') {
			return fmt.Errorf("must be a JSON pointer: ~ only as ~0 (for ~) or ~1 (for /)")
		}
		ptr = ptr[i+2:]
	}
	return nil
}
