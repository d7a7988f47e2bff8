package config_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

const (
	mergePatch = `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":60}}}}`
	jsonPatch  = `[{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"ml"},{"op":"remove","path":"/spec/template/spec/affinity"},` +
		`{"op":"test","path":"/kind","value":"VirtualMachine"},{"op":"move","from":"/a","path":"/b"},{"op":"copy","from":"","path":"/c"},{"op":"replace","path":"/d","value":null}]`
)

// A patch is told by its first character, given as JSON, base64 of JSON or a file holding it, and kept as given.
func TestParseVMPatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "patch.json")
	if err := os.WriteFile(file, []byte("\n"+jsonPatch+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, raw, data string
		kind            VMPatchKind
	}{
		{"merge patch", mergePatch, mergePatch, MergePatch},
		{"merge patch with blanks around", "  \n" + mergePatch + "\n", mergePatch, MergePatch},
		{"merge patch as base64", base64.StdEncoding.EncodeToString([]byte(mergePatch)), mergePatch, MergePatch},
		{"JSON patch", jsonPatch, jsonPatch, JSONPatch},
		{"JSON patch as unpadded URL-safe base64", base64.RawURLEncoding.EncodeToString([]byte(jsonPatch)), jsonPatch, JSONPatch},
		{"JSON patch from a file", file, jsonPatch, JSONPatch},
		{"an empty merge patch", `{}`, `{}`, MergePatch},
		{"an empty JSON patch", `[]`, `[]`, JSONPatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMPatch, tt.raw))
			if problems != "" {
				t.Fatal(problems)
			}
			if cfg.VMPatch == nil || cfg.VMPatch.Kind != tt.kind || string(cfg.VMPatch.Data) != tt.data {
				t.Fatalf("VMPatch %+v, want a %s of %s", cfg.VMPatch, tt.kind, tt.data)
			}
		})
	}
	for _, blank := range []string{"", "  "} {
		if cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMPatch, blank)); problems != "" || cfg.VMPatch != nil {
			t.Errorf("%q: VMPatch %+v, %s; want none", blank, cfg.VMPatch, problems)
		}
	}
}

// What is not a patch is refused, naming the flag and what is wrong, before a VM is built.
func TestParseVMPatchRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	notJSON := write("token", []byte("k10abc::server:5ecret\n"))
	big := write("big.json", []byte(`{"metadata":{"annotations":{"a":"`+strings.Repeat("x", MaxVMPatchSize)+`"}}}`))
	fifo, _ := hostile.SpecialFiles(t)
	op := func(i int) string { return `{"op":"test","path":"/kind","value":"VirtualMachine"}` }
	many := make([]string, MaxVMPatchOperations+1)
	for i := range many {
		many[i] = op(i)
	}
	tests := []struct{ name, raw, want string }{
		{"YAML", "spec:\n  running: true\n", "is neither JSON nor base64 of JSON, and cannot be read as a file path: no such file or directory"},
		{"a JSON string", `"spec"`, "is neither JSON nor base64 of JSON"},
		{"a missing file", filepath.Join(dir, "missing.json"), "cannot be read as a file path: no such file or directory (the value is not shown"},
		{"a FIFO", fifo, "cannot be read as a file path: it is a FIFO (named pipe), not a regular file"},
		{"/dev/zero", "/dev/zero", "cannot be read as a file path: it is a character device, not a regular file"},
		{"a directory", dir, "cannot be read as a file path: it is a directory"},
		{"a file that is not JSON", notJSON, "names a file that is not valid JSON (at byte 1; its content is not shown: it may hold a secret)"},
		{"a file over 64 KiB", big, "cannot be read as a file path: it is 65573 bytes, over the 64 KiB limit"},
		{"inline over 64 KiB", `{"a":"` + strings.Repeat("x", MaxVMPatchSize) + `"}`, "is 65544 bytes, over the 64 KiB limit"},
		{"a value over its bound", strings.Repeat(" ", 1<<20), "is 1 MiB long, over the 85.3 KiB this flag takes"},
		{"broken JSON", `{"spec":`, "is not valid JSON (at byte 8: unexpected end of JSON input); want a JSON merge patch (an object"},
		{"JSON nested past reason", hostile.DeepJSON(20000), "exceeded max depth"},
		{"a duplicate field", `{"spec":{"running":true,"running":false}}`, `has duplicate field "spec.running"`},
		{"a list of numbers", `[1,2]`, "is a list of something else than operations (JSON objects with op and path)"},
		{"an unknown op", `[{"op":"merge","path":"/spec"}]`, "operation 0: op must be add, remove, replace, move, copy or test"},
		{"no op", `[{"path":"/spec"}]`, "operation 0: op must be add, remove, replace, move, copy or test"},
		{"an add without a value", `[{"op":"add","path":"/spec/x"}]`, "operation 0 (add) needs value"},
		{"a move without from", `[{"op":"test","path":"","value":{}},{"op":"move","path":"/spec/x"}]`, "operation 1 (move) needs from"},
		{"a remove without a path", `[{"op":"remove"}]`, "operation 0 (remove) needs path"},
		{"an unknown field", `[{"op":"remove","path":"/spec/x","value":1}]`, `operation 0 (remove) has an unknown field "value"`},
		{"a path without its /", `[{"op":"remove","path":"spec/running"}]`, `operation 0 (remove): path must be a JSON pointer: "" for the whole VM, or starting with /`},
		{"a bad escape", `[{"op":"copy","from":"/metadata/labels/a~2b","path":"/x"}]`, "operation 0 (copy): from must be a JSON pointer: ~ only as ~0 (for ~) or ~1 (for /)"},
		{"a path that is a number", `[{"op":"remove","path":1}]`, "operation 0 (remove): path must be a JSON string"},
		{"too many operations", "[" + strings.Join(many, ",") + "]", "has 257 operations, more than the 256 a VM patch may have"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMPatch, tt.raw))
			if !strings.Contains(problems, "--harvester-vm-patch: ") || !strings.Contains(problems, tt.want) {
				t.Fatalf("want a problem of --harvester-vm-patch containing %q, got %q", tt.want, problems)
			}
			if strings.Contains(problems, "5ecret") {
				t.Errorf("the problem shows the file's content: %s", problems)
			}
		})
	}
}
