package cloudinit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// loadCases are cloud-config documents with tags and values at the edge of what cloud-init's YAML loader
// (PyYAML's SafeLoader) constructs. refuse is what checkConfig says; cloud-init's loader agrees, except where
// strict says the driver refuses on purpose what PyYAML would load.
var loadCases = []struct {
	doc            string
	refuse, strict bool
}{
	// Tags the loader has no constructor for.
	{doc: "a: !!python/object:os.system x", refuse: true},
	{doc: "a: !!python/object/apply:os.system [id]", refuse: true},
	{doc: "a: !!python/str x", refuse: true},
	{doc: "a: !foo x", refuse: true},
	{doc: "a: !Ref x", refuse: true},
	{doc: "a: !Sub [x, {y: 1}]", refuse: true},
	{doc: "a: !GetAtt\n  b: 1", refuse: true},
	{doc: "a: !<tag:example.com,2000:x> 1", refuse: true},
	{doc: "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1", refuse: true},
	{doc: "a: !<!bar> x", refuse: true},
	{doc: "!foo {a: 1}", refuse: true},
	{doc: "a: [1, !foo 2]", refuse: true},
	{doc: "!foo a: 1", refuse: true},
	{doc: "a: !!value =", refuse: true},
	{doc: "a: !!merge x", refuse: true},
	{doc: "!!merge x: {a: 1}", refuse: true, strict: true},
	// Standard tags on the wrong kind of node.
	{doc: "a: !!str [1]", refuse: true},
	{doc: "a: !!seq x", refuse: true},
	{doc: "a: !!map x", refuse: true},
	{doc: "a: !!set [a]", refuse: true},
	{doc: "a: !!binary [a]", refuse: true},
	{doc: "a: !!null []", refuse: true},
	{doc: "a: !!timestamp [a]", refuse: true},
	{doc: "a: !!python/unicode [a]", refuse: true},
	{doc: "a: !!omap {a: 1}", refuse: true},
	// Values their tags cannot read.
	{doc: "a: !!int x", refuse: true},
	{doc: `a: !!int ""`, refuse: true},
	{doc: "a: !!int", refuse: true},
	{doc: "a: !!int 09", refuse: true},
	{doc: "a: !!int 1.0", refuse: true},
	{doc: "a: !!int 0x", refuse: true},
	{doc: "a: !!int -0b", refuse: true},
	{doc: "a: !!float x", refuse: true},
	{doc: "a: !!float", refuse: true},
	{doc: "a: !!float 0x10", refuse: true},
	{doc: "a: !!float ._", refuse: true},
	{doc: "a: !!float 1:x", refuse: true},
	{doc: "a: !!bool x", refuse: true},
	{doc: "a: !!bool y", refuse: true},
	{doc: "a: !!bool 1", refuse: true},
	{doc: "a: !!bool", refuse: true},
	{doc: "a: !!timestamp x", refuse: true},
	{doc: "a: !!timestamp", refuse: true},
	{doc: "a: !!timestamp 2001-02-30", refuse: true},
	{doc: "a: !!binary é", refuse: true},
	{doc: `a: !!binary "YQ=x"`, refuse: true},
	{doc: `a: !!binary "YQ"`, refuse: true},
	{doc: `a: !!binary "Y"`, refuse: true},
	{doc: `a: !!binary "Y=="`, refuse: true},
	{doc: "a: !!omap [a]", refuse: true},
	{doc: "a: !!pairs [{a: 1, b: 2}]", refuse: true},
	// Plain values PyYAML resolves to a tag it then cannot construct.
	{doc: "a: =", refuse: true},
	{doc: "a: [=]", refuse: true},
	{doc: "a:\n- =", refuse: true},
	{doc: "a: {b: =}", refuse: true},
	{doc: "a: <<", refuse: true},
	{doc: "a:\n- <<", refuse: true},
	{doc: "a: {<<: 1}", refuse: true},
	{doc: "<<: [{a: 1}, 3]", refuse: true},
	{doc: "a: &x [1]\n<<: *x", refuse: true},
	{doc: "a: 2001-13-45", refuse: true},
	{doc: "a: 2001-02-30", refuse: true},
	{doc: "a: 0000-01-01", refuse: true},
	{doc: "a: 2001-01-01 25:00:00", refuse: true},
	{doc: "a: 2001-01-01 10:00:60", refuse: true},
	{doc: "a: 2001-01-01t10:00:00+24", refuse: true},
	{doc: "a: 0b_", refuse: true},
	{doc: "a: 0x_", refuse: true},
	{doc: "a: -0b__", refuse: true},
	// Keys Python cannot hash, and keys that are not keys in an ordered map.
	{doc: "? [a]\n: 1", refuse: true},
	{doc: "? {a: 1}\n: 1", refuse: true},
	{doc: "a: {? [b]\n  : 1}", refuse: true},
	{doc: "a: !!set {[1]: 2}", refuse: true},
	{doc: "x: !!omap [{<<: {a: 1}}]", refuse: true},
	{doc: "x: !!omap [{=: 1}]", refuse: true},

	// What the loader reads.
	{doc: "a: !!python/unicode x"},
	{doc: "a: !!str x"},
	{doc: "a: !!str"},
	{doc: "a: !<tag:yaml.org,2002:str> x"},
	{doc: "a: ! 12"},
	{doc: "a: !!seq [1]"},
	{doc: "a: !!map {b: 1}"},
	{doc: "a: !!null x"},
	{doc: "a: !!int 0x1f"},
	{doc: "a: !!int 1_0"},
	{doc: "a: !!int 0b11"},
	{doc: "a: !!int 1:30"},
	{doc: "a: !!int 0o17"},
	{doc: "a: !!int 017"},
	{doc: "a: !!int +1"},
	{doc: `a: !!int " 5 "`},
	{doc: `a: !!int "--5"`},
	{doc: `a: !!int "0x0x1"`},
	{doc: `a: !!int "1:-5"`},
	{doc: `a: !!int "١"`},
	{doc: "a: !!int 1__2"},
	{doc: "a: !!float .inf"},
	{doc: "a: !!float 1"},
	{doc: "a: !!float 1:30.5"},
	{doc: "a: !!float 1e3"},
	{doc: "a: !!float 1_0.5"},
	{doc: `a: !!float "1e400"`},
	{doc: `a: !!float "infinity"`},
	{doc: "a: !!float .NaN"},
	{doc: "a: !!float -.Inf"},
	{doc: "a: !!bool yes"},
	{doc: "a: !!bool TRUE"},
	{doc: "a: !!bool on"},
	{doc: "a: !!timestamp 2001-01-01"},
	{doc: `a: !!timestamp "2001-01-01\n"`},
	{doc: "a: !!timestamp 2001-12-14t21:59:43.10-05:00"},
	{doc: `a: !!binary "!!"`},
	{doc: "a: !!binary aGk="},
	{doc: "a: !!binary"},
	{doc: `a: !!binary "YQ==YQ"`},
	{doc: "a: !!binary |\n  aGVs\n  bG8=\n"},
	{doc: "a: !!omap [{a: 1}]"},
	{doc: "a: !!pairs [{a: 1}, {a: 2}]"},
	{doc: "a: !!omap [{[1]: 2}]"},
	{doc: "a: !!set {a, b}"},
	{doc: "x: !!set {<<: {a: 1}}"},
	{doc: `a: "="`},
	{doc: "=: 1"},
	{doc: "{=: 1}"},
	{doc: "a:\n  =: 1"},
	{doc: "? =\n: 1"},
	{doc: "a: '<<'"},
	{doc: "!!merge <<: {a: 1}"},
	{doc: "a: &x {b: 1}\n<<: [*x]"},
	{doc: "a: &x {b: 1}\n<<: *x"},
	{doc: "a: &x [{b: 1}]\nc: {<<: *x}"},
	{doc: "a: 2004-02-29"},
	{doc: "a: 2001-1-1"},
	{doc: "a: 2001-01-01t10:00:00+23:59"},
	{doc: "a: 0_"},
	{doc: "a: 1_"},
	{doc: "a: 1._"},
	{doc: "a: ~"},
	{doc: "a: 0x1F"},
	{doc: "a: 0o17"},
	{doc: "a: 12:30:45"},
	{doc: "a: .5"},
	{doc: "a: [yes, No, on, OFF, y, n]"},
}

// checkLoad runs doc through parseConfig and checkConfig, failing the test if it does not parse: every case is
// YAML that yaml.v3 reads, so only the loader's rules decide.
func checkLoad(t *testing.T, doc string) error {
	t.Helper()
	n, err := parseConfig([]byte(doc))
	if err != nil {
		t.Fatalf("%q does not parse: %v", doc, err)
	}
	return checkConfig(n)
}

func TestCheckLoadable(t *testing.T) {
	for _, c := range loadCases {
		err := checkLoad(t, c.doc)
		var le *yamlnode.LoadError
		if err != nil && !errors.As(err, &le) {
			t.Errorf("%q: %v is not a *yamlnode.LoadError", c.doc, err)
		}
		if (err != nil) != c.refuse {
			t.Errorf("%q: checkConfig() = %v, want refused %v", c.doc, err, c.refuse)
		}
	}
}

// What checkConfig refuses is what cloud-init's own YAML loader (cloudinit.safeyaml.load, PyYAML's SafeLoader)
// refuses, case by case, apart from the cases refused on purpose.
func TestCheckLoadableAsCloudInitLoads(t *testing.T) {
	docs := make([]string, len(loadCases))
	for i, c := range loadCases {
		docs[i] = c.doc
	}
	in, err := json.Marshal(docs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cloudInitPython(t), filepath.Join("testdata", "load.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("load.py: %v\n%s", err, stderr.Bytes())
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(docs) {
		t.Fatalf("load.py output: %v\n%s", err, out)
	}
	for i, c := range loadCases {
		if pyRefuses := got[i] != ""; pyRefuses != (c.refuse && !c.strict) {
			t.Errorf("%q: cloud-init's loader says %q; the test expects it to refuse: %v", c.doc, got[i], c.refuse && !c.strict)
		}
	}
}

// A document cloud-init cannot load is an *Error of its part, at the node's key path.
func TestUserDataRefusesUnloadableYAML(t *testing.T) {
	mime := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n" +
		"#cloud-config\nruncmd: [a]\n--b\nContent-Type: text/cloud-config\n\n#cloud-config\nusers:\n- name: u\n  groups: !Ref g\n--b--\n"
	tests := []struct {
		name string
		in   Input
		part Part
		want string // the whole message
	}{
		{"a python object", Input{User: []byte("#cloud-config\nruncmd:\n- echo\n- !!python/object/apply:os.system [id]\n")}, PartUser,
			"runcmd[1]: the YAML tag !!python/object/apply:os.system is not one cloud-init's YAML loader knows (it knows " +
				"!!str, !!int, !!float, !!bool, !!null, !!timestamp, !!binary, !!seq, !!map, !!omap, !!pairs and !!set); " +
				"cloud-init would fail to load the whole cloud-config, the driver's SSH key included"},
		{"a local tag in a MIME part", Input{User: []byte(mime)}, PartUser,
			"MIME part 2 (text/cloud-config): users[0].groups: the YAML tag !Ref is not one cloud-init's YAML loader knows"},
		{"a jinja template", Input{User: []byte("## template: jinja\n#cloud-config\nhostname: '{{ v1.local_hostname }}'\nx: !Sub y\n")}, PartUser,
			"x: the YAML tag !Sub is not one"},
		{"a YAML mapping without #cloud-config", Input{User: []byte("a:\n  b: !!int twelve\n")}, PartUser,
			"a.b: the value tagged !!int is not an integer that cloud-init's YAML loader reads"},
		{"a plain =", Input{User: []byte("#cloud-config\nbootcmd: [=]\n")}, PartUser,
			"bootcmd[0]: a plain = is a value key to cloud-init's YAML loader, which cannot load one here (only as a key of a mapping); quote it to keep it a string"},
		{"an impossible date", Input{User: []byte("#cloud-config\nx-release: 2024-02-30\n")}, PartUser,
			"x-release: a plain value cloud-init's YAML loader takes for a date or time (YYYY-MM-DD, optionally with hh:mm:ss), but cannot read as one; quote it to keep it a string"},
		{"a list as a key", Input{User: []byte("#cloud-config\nwrite_files:\n- ? [a]\n  : b\n")}, PartUser,
			"write_files[0]: a key is a list, which cloud-init's YAML loader cannot use as a key"},
		{"a merge key naming a list", Input{User: []byte("#cloud-config\nx: &x [1]\napt: {<<: *x}\n")}, PartUser,
			"apt.<<: a merge key (<<) must name a mapping or a list of mappings"},
		{"the wrong kind", Input{User: []byte("#cloud-config\npackages: !!str [a]\n")}, PartUser,
			"packages: the YAML tag !!str needs a scalar (text or a number), not a list"},
		{"a tag on the whole document", Input{User: []byte("#cloud-config\n!Config\nruncmd: [a]\n")}, PartUser,
			"the YAML tag !Config is not one"},
		{"Rancher's document", Input{Rancher: []byte("#cloud-config\nruncmd:\n- !shell x\n")}, PartRancher,
			"runcmd[0]: the YAML tag !shell is not one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, err := range []error{func() error { _, err := UserData(tt.in); return err }(), Check(tt.in)} {
				var e *Error
				if !errors.As(err, &e) || e.Part != tt.part || !strings.HasPrefix(e.Message(), tt.want) {
					t.Fatalf("error = %v; want one of %s starting %q", err, tt.part, tt.want)
				}
			}
		})
	}
}
