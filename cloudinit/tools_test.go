package cloudinit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// cloudInitPython is the interpreter cloud-init runs with (its #! line), which can import cloudinit.
func cloudInitPython(t *testing.T) string {
	t.Helper()
	f, err := os.Open(testenv.CloudInit(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		t.Fatalf("cannot find cloud-init's interpreter in %q", line)
	}
	return fields[0]
}

// schemaCheck runs `cloud-init schema --config-file` on a cloud-config and fails on errors and deprecations.
func schemaCheck(t *testing.T, name string, doc []byte) {
	t.Helper()
	if out, err := schema(t, doc); err != nil || bytes.Contains(bytes.ToLower(out), []byte("deprecat")) {
		t.Errorf("%s: cloud-init schema: %v\n%s\n--- document:\n%s", name, err, out, doc)
	}
}

func schema(t *testing.T, doc []byte) ([]byte, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	return exec.Command(testenv.CloudInit(t), "schema", "--config-file", f).CombinedOutput()
}

// The schema check can fail: a runcmd that is not a list, and a deprecated key, are caught.
func TestSchemaCheckRejects(t *testing.T) {
	testenv.CloudInit(t)
	if out, err := schema(t, []byte("#cloud-config\nruncmd: echo\n")); err == nil {
		t.Errorf("cloud-init schema accepted runcmd: echo\n%s", out)
	}
	if out, _ := schema(t, []byte("#cloud-config\nchpasswd: {list: [root:x]}\n")); !bytes.Contains(bytes.ToLower(out), []byte("deprecat")) {
		t.Errorf("cloud-init schema does not report chpasswd.list as deprecated:\n%s", out)
	}
}

// cloudConfigs returns the cloud-config documents of a rendered user data: the document itself, the document
// without its `## template: jinja` line, or each text/cloud-config part of a MIME message. It fails the test if
// the output is none of those or a part does not decode.
func cloudConfigs(t *testing.T, out []byte) [][]byte {
	t.Helper()
	switch {
	case bytes.HasPrefix(out, []byte(headerCloudConfig+"\n")):
		return [][]byte{out}
	case bytes.HasPrefix(out, []byte(headerJinja+"\n")):
		return [][]byte{bytes.TrimPrefix(out, []byte(headerJinja+"\n"))}
	}
	leaves, err := readMIME(out)
	if err != nil {
		t.Fatalf("output is neither a cloud-config nor MIME: %v\n%s", err, out)
	}
	var docs [][]byte
	for _, l := range leaves {
		typ, payload, err := l.effectiveType(userdata.NewBudget(userdata.MaxSize))
		if err != nil {
			t.Fatal(err)
		}
		if typ == "text/cloud-config" {
			docs = append(docs, payload)
		}
	}
	return docs
}

// Every golden output is valid cloud-config to cloud-init 22.4's own schema check: the document, or each
// text/cloud-config part of a multipart one.
func TestGoldenSchema(t *testing.T) {
	testenv.CloudInit(t)
	for _, c := range goldenCases {
		want, err := os.ReadFile(c.wantPath())
		if err != nil {
			t.Fatal(err)
		}
		docs := cloudConfigs(t, want)
		if len(docs) == 0 {
			t.Errorf("%s: no cloud-config in the output", c.name)
		}
		for _, d := range docs {
			schemaCheck(t, c.name, d)
		}
	}
}

// consumed is what cloud-init's own user-data processing makes of a user data (testdata/consume.py).
type consumed struct {
	Parts []struct {
		Type     string `json:"type"`
		Filename string `json:"filename"`
	} `json:"parts"`
	CloudConfig map[string]any `json:"cloud_config"`
	Scripts     []string       `json:"scripts"`
}

// consume runs user data through cloud-init's UserDataProcessor and default part handlers, failing the test
// when cloud-init warns about it.
func consume(t *testing.T, userData []byte) consumed {
	t.Helper()
	c, warnings := consumeRaw(t, userData)
	if len(warnings) > 0 {
		t.Errorf("cloud-init warned while reading the user data:\n%s", warnings)
	}
	return c
}

// consumeRaw is consume returning cloud-init's warnings and errors (its stderr) instead of failing on them.
func consumeRaw(t *testing.T, userData []byte) (consumed, []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(f, userData, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cloudInitPython(t), filepath.Join("testdata", "consume.py"), f)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("consume.py: %v\n%s", err, stderr.Bytes())
	}
	var c consumed
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("consume.py output: %v\n%s", err, out)
	}
	return c, stderr.Bytes()
}

// The harness reports what cloud-init complains about, so the checks above can fail.
func TestConsumeReportsWarnings(t *testing.T) {
	cloudInitPython(t)
	_, warnings := consumeRaw(t, []byte("#cloud-config\nruncmd: [\n"))
	if !bytes.Contains(warnings, []byte("WARNING cloudinit.handlers.cloud_config: Failed at merging")) {
		t.Fatalf("no warning for an unparsable cloud-config; stderr:\n%s", warnings)
	}
}

// Each golden output, read by cloud-init's own code: the parts are typed as intended, the merged cloud-config
// names the machine, Rancher's install command is the last runcmd entry, user scripts run before runcmd, and
// the merged cloud-config (what the modules act on) passes the schema check.
func TestGoldenAsCloudInitReadsIt(t *testing.T) {
	cloudInitPython(t)
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(c.wantPath())
			if err != nil {
				t.Fatal(err)
			}
			got := consume(t, want)
			var types []string
			for _, p := range got.Parts {
				types = append(types, p.Type)
			}
			if strings.Join(types, ",") != strings.Join(c.partTypes, ",") {
				t.Errorf("parts = %v, want %v", types, c.partTypes)
			}
			cc := got.CloudConfig
			if cc["hostname"] != c.hostname {
				t.Errorf("hostname = %v, want %q", cc["hostname"], c.hostname)
			}
			if strings.Join(got.Scripts, ",") != strings.Join(c.scripts, ",") {
				t.Errorf("scripts run in order %v, want %v", got.Scripts, c.scripts)
			}
			runcmd, _ := cc["runcmd"].([]any)
			if c.rancher && (len(runcmd) == 0 || runcmd[len(runcmd)-1] != installCommand) {
				t.Errorf("runcmd = %v, want %q last", runcmd, installCommand)
			}
			if c.runcmdFirst != nil && (len(runcmd) == 0 || !jsonEqual(runcmd[0], c.runcmdFirst)) {
				t.Errorf("runcmd = %v, want %v first", runcmd, c.runcmdFirst)
			}
			keys, _ := cc["ssh_authorized_keys"].([]any)
			if len(keys) == 0 || keys[0] != driverKey {
				t.Errorf("ssh_authorized_keys = %v, want the driver's key first", keys)
			}
			for _, k := range c.wantKeys {
				if _, ok := cc[k]; !ok {
					t.Errorf("the merged cloud-config has no %s", k)
				}
			}
			for _, k := range c.absentKeys {
				if v, ok := cc[k]; ok {
					t.Errorf("the merged cloud-config has %s: %v", k, v)
				}
			}
			merged, err := json.Marshal(cc)
			if err != nil {
				t.Fatal(err)
			}
			schemaCheck(t, c.name+" (as merged by cloud-init)", append([]byte(headerCloudConfig+"\n"), merged...))
		})
	}
}

func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// nastyPasswords are passwords YAML could misread if written carelessly.
var nastyPasswords = []string{
	`p@ss: #not-a-comment`, `'single'`, `"double"`, `back\slash`, "tab\there", " lead and trail ", "yes", "on",
	"1:30", "0644", "~", "null", "1e3", "- dash", "[flow]", "{flow}", "{{ jinja }}", "&anchor", "*alias", "!tag",
	"%percent", "@at", "`tick`", "ünïcödé ✓", "|", ">", "?", "#", "=", "<<", "Off", ".inf",
}

// The password cloud-init reads back (PyYAML, YAML 1.1) is the password given, byte for byte.
func TestPasswordAsCloudInitReadsIt(t *testing.T) {
	cloudInitPython(t)
	for _, pw := range nastyPasswords {
		out, err := UserData(Input{Hostname: "m1", SSHPassword: pw})
		if err != nil {
			t.Fatalf("UserData(password %q): %v", pw, err)
		}
		cc := consume(t, out).CloudConfig
		ch, _ := cc["chpasswd"].(map[string]any)
		users, _ := ch["users"].([]any)
		if len(users) != 1 {
			t.Fatalf("password %q: chpasswd = %v", pw, cc["chpasswd"])
		}
		u, _ := users[0].(map[string]any)
		if u["password"] != pw || u["name"] != "root" || u["type"] != "text" || ch["expire"] != false {
			t.Errorf("password %q: cloud-init reads chpasswd.users[0] = %v, expire %v", pw, u, ch["expire"])
		}
		if cc["ssh_pwauth"] != true {
			t.Errorf("password %q: ssh_pwauth = %v", pw, cc["ssh_pwauth"])
		}
	}
}

// Strings the driver writes read back unchanged in PyYAML (YAML 1.1), whether yamlnode.Str writes them plain or
// quoted.
func TestDriverStringsAsCloudInitReadsThem(t *testing.T) {
	cloudInitPython(t)
	words := append([]string{"root", "ubuntu", "/bin/bash", "root:root", "0600", "m1.example.com", "a b", "ssh-rsa AAAA+/= x@y",
		"y", "n", "NO", "True", "null", "Null", "~", "=", "1_000", "0x1f", "0o17", "1:30", "12:30:00", "2001-01-01",
		"-", "--now", "a: b", "a #b", "é", "trailing ", "tab\t"}, nastyPasswords...)
	doc := yamlnode.Map()
	yamlnode.Set(doc, "x-strings", yamlnode.StrSeq(words...))
	body, err := encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := consume(t, append([]byte(headerCloudConfig+"\n"), body...)).CloudConfig["x-strings"].([]any)
	if len(got) != len(words) {
		t.Fatalf("PyYAML read %d strings, want %d:\n%s", len(got), len(words), body)
	}
	for i, w := range words {
		if got[i] != w {
			t.Errorf("yamlnode.Str(%q) reads back as %#v in PyYAML", w, got[i])
		}
	}
}
