package cloudinit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/textproto"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

const rancherDoc = "#cloud-config\nhostname: from-rancher\nruncmd:\n- " + installCommand + "\n"

// render renders in and reads the single cloud-config it must produce.
func render(t *testing.T, in Input) (map[string]any, []byte) {
	t.Helper()
	out, err := UserData(in)
	if err != nil {
		t.Fatalf("UserData: %v", err)
	}
	body, ok := bytes.CutPrefix(out, []byte(headerCloudConfig+"\n"))
	if !ok {
		t.Fatalf("output is not a single cloud-config:\n%s", out)
	}
	var m map[string]any
	if err := yaml.Unmarshal(body, &m); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	return m, out
}

func agentCmd() []any { return []any{"systemctl", "enable", "--now", "qemu-guest-agent.service"} }

func TestUserDataRules(t *testing.T) {
	tests := []struct {
		name  string
		in    Input
		check func(t *testing.T, m map[string]any)
	}{
		{"the user's scalar wins over the driver's default",
			Input{Hostname: "m", User: []byte("#cloud-config\ndisable_root: true\nssh_pwauth: false\n"), SSHPassword: "pw"},
			func(t *testing.T, m map[string]any) {
				want(t, m["disable_root"], true)
				want(t, m["ssh_pwauth"], false)
			}},
		{"Rancher's document without the #cloud-config line",
			Input{Hostname: "m", Rancher: []byte("runcmd: [" + installCommand + "]\n")},
			func(t *testing.T, m map[string]any) { want(t, m["runcmd"], []any{installCommand}) }},
		{"the user's scalar wins over Rancher's",
			Input{Hostname: "m", User: []byte("#cloud-config\ntimezone: UTC\n"), Rancher: []byte("#cloud-config\ntimezone: CET\n")},
			func(t *testing.T, m map[string]any) { want(t, m["timezone"], "UTC") }},
		{"Rancher's hostname wins over the machine name",
			Input{Hostname: "m", Rancher: []byte(rancherDoc)},
			func(t *testing.T, m map[string]any) { want(t, m["hostname"], "from-rancher") }},
		{"without Rancher's hostname, the machine name",
			Input{Hostname: "m", User: []byte("#cloud-config\nhostname: pool-wide\nfqdn: a.b\npreserve_hostname: true\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["hostname"], "m")
				absent(t, m, "fqdn", "preserve_hostname")
			}},
		{"lists: driver, user, Rancher; a repeat from a later source is dropped, a source's own repeat kept",
			Input{Hostname: "m", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true, Rancher: []byte(rancherDoc),
				User: []byte("#cloud-config\nssh_authorized_keys: [" + keyPairKey + ", " + driverKey + "]\nruncmd: [a, a, " + installCommand + "]\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["ssh_authorized_keys"], []any{driverKey, keyPairKey})
				want(t, m["runcmd"], []any{agentCmd(), "a", "a", installCommand})
			}},
		{"guest agent: a [name, version] package and a runcmd mentioning it are enough",
			Input{Hostname: "m", InstallGuestAgent: true,
				User: []byte("#cloud-config\npackages: [[qemu-guest-agent, '1:8.2']]\nruncmd: ['systemctl start qemu-guest-agent']\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["packages"], []any{[]any{"qemu-guest-agent", "1:8.2"}})
				want(t, m["runcmd"], []any{"systemctl start qemu-guest-agent"})
			}},
		{"guest agent: opted out",
			Input{Hostname: "m", InstallGuestAgent: false},
			func(t *testing.T, m map[string]any) { absent(t, m, "packages", "runcmd") }},
		{"guest agent: the command comes before the user's",
			Input{Hostname: "m", InstallGuestAgent: true, User: []byte("#cloud-config\nruncmd: [b]\npackages: [vim]\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["runcmd"], []any{agentCmd(), "b"})
				want(t, m["packages"], []any{"qemu-guest-agent", "vim"})
			}},
		{"root: keys at the top, disable_root false, no users",
			Input{Hostname: "m", SSHAuthorizedKeys: []string{" " + driverKey + "\n", ""}},
			func(t *testing.T, m map[string]any) {
				want(t, m["ssh_authorized_keys"], []any{driverKey})
				want(t, m["disable_root"], false)
				absent(t, m, "users")
			}},
		{"a non-root user merges into the user's entry of the same name, the user's values first",
			Input{Hostname: "m", SSHUser: "ubuntu", SSHAuthorizedKeys: []string{driverKey},
				User: []byte("#cloud-config\nusers:\n  - default\n  - name: ubuntu\n    shell: /bin/zsh\n    ssh_authorized_keys: [" + keyPairKey + "]\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["users"], []any{"default", map[string]any{"name": "ubuntu", "sudo": sudoNoPassword,
					"shell": "/bin/zsh", "ssh_authorized_keys": []any{driverKey, keyPairKey}}})
				absent(t, m, "disable_root")
			}},
		{"a users list without default keeps it out",
			Input{Hostname: "m", SSHUser: "rancher", User: []byte("#cloud-config\nusers:\n  - name: ops\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["users"], []any{map[string]any{"name": "rancher", "sudo": sudoNoPassword, "shell": loginShell},
					map[string]any{"name": "ops"}})
			}},
		{"users as a comma-separated string",
			Input{Hostname: "m", SSHUser: "rancher", User: []byte("#cloud-config\nusers: default, bob\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["users"], []any{"default", map[string]any{"name": "rancher", "sudo": sudoNoPassword, "shell": loginShell}, "bob"})
			}},
		{"users as a mapping",
			Input{Hostname: "m", SSHUser: "rancher", User: []byte("#cloud-config\nusers:\n  default: true\n  bob: {shell: /bin/sh}\n  eve: false\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["users"], []any{"default", map[string]any{"name": "rancher", "sudo": sudoNoPassword, "shell": loginShell},
					map[string]any{"name": "bob", "shell": "/bin/sh"}})
			}},
		{"mappings merge key by key, the user's values first",
			Input{Hostname: "m", SSHPassword: "pw", User: []byte("#cloud-config\nchpasswd:\n  expire: true\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["chpasswd"], map[string]any{"expire": true,
					"users": []any{map[string]any{"name": "root", "password": "pw", "type": "text"}}})
			}},
		{"an alias to a merged list keeps meaning the user's list",
			Input{Hostname: "m", InstallGuestAgent: true, Rancher: []byte(rancherDoc),
				User: []byte("#cloud-config\nruncmd: &r [a]\nbootcmd: *r\n")},
			func(t *testing.T, m map[string]any) {
				want(t, m["runcmd"], []any{agentCmd(), "a", installCommand})
				want(t, m["bootcmd"], []any{"a"})
			}},
		{"a header-less YAML mapping, a byte order mark and CRLF line ends",
			Input{Hostname: "m", User: []byte("\ufeff#Cloud-Config\r\ntimezone: UTC\r\n")},
			func(t *testing.T, m map[string]any) { want(t, m["timezone"], "UTC") }},
		{"gzip user data",
			Input{Hostname: "m", User: gzipped(t, "#cloud-config\ntimezone: UTC\n")},
			func(t *testing.T, m map[string]any) { want(t, m["timezone"], "UTC") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := render(t, tt.in)
			tt.check(t, m)
		})
	}
}

func want(t *testing.T, got, expected any) {
	t.Helper()
	if !jsonEqual(got, expected) {
		t.Errorf("got %#v, want %#v", got, expected)
	}
}

func absent(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if v, ok := m[k]; ok {
			t.Errorf("%s: %v is set", k, v)
		}
	}
}

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestUserDataErrors(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		part Part   // the part at fault
		want string // the message starts with this
	}{
		{"invalid YAML", Input{User: []byte("#cloud-config\nruncmd: [a\n")}, PartUser, "not valid YAML: line "},
		{"two documents", Input{User: []byte("#cloud-config\na: 1\n---\nb: 2\n")}, PartUser, "holds more than one YAML document"},
		{"a list at the top", Input{User: []byte("#cloud-config\n- a\n")}, PartUser, "must be a YAML mapping of cloud-config keys, not a list"},
		{"not a format cloud-init reads", Input{User: []byte("hello")}, PartUser, "not a format cloud-init reads"},
		{"a list section that is not a list", Input{User: []byte("#cloud-config\nruncmd: echo hi\n"), Rancher: []byte(rancherDoc)},
			PartUser, "runcmd: must be a list, not a string"},
		{"an alias cycle", Input{User: []byte("#cloud-config\na: &x [*x]\n")}, PartUser, "an alias refers to a node that contains it"},
		{"a billion laughs", Input{User: []byte(laughs(10))}, PartUser, "the document's aliases expand to more than a million nodes"},
		{"YAML that does not survive writing", Input{User: []byte("#cloud-config\na: !!set {x, y}\n")},
			PartUser, "uses YAML that cannot be written back unchanged (an explicit tag such as !!set?): wrote YAML that reads back differently"},
		{"broken gzip", Input{User: gzipped(t, "#cloud-config\n")[:15]}, PartUser, "gzip: "},
		{"broken MIME", Input{User: []byte("MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n")}, PartUser, "MIME: a multipart Content-Type without a boundary"},
		{"a MIME cloud-config part that is not YAML",
			Input{User: []byte("MIME-Version: 1.0\nContent-Type: text/cloud-config\n\n#cloud-config\na: [\n")},
			PartUser, "MIME part 1 (text/cloud-config): not valid YAML"},
		{"Rancher's document is a script", Input{Rancher: []byte("#!/bin/sh\necho\n")}, PartRancher, "not a #cloud-config document but text/x-shellscript"},
		{"Rancher's document is plain text", Input{Rancher: []byte("hello")}, PartRancher, "must be a YAML mapping of cloud-config keys, not a string"},
		{"Rancher's document is not YAML", Input{Rancher: []byte("#cloud-config\n: :\n")}, PartRancher, "not valid YAML"},
		{"Rancher's hostname is not a string", Input{Rancher: []byte("#cloud-config\nhostname: [a]\n")}, PartRancher, "hostname: must be a non-empty string"},
		{"a password with a line break", Input{SSHPassword: "a\nb"}, PartSSHPassword, "contains a line break or NUL, which chpasswd cannot set"},
		{"a relative write_files path", Input{WriteFiles: []File{{Path: "etc/x"}}}, PartWriteFiles, `write_files[0]: path "etc/x" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := UserData(tt.in)
			var e *Error
			if !errors.As(err, &e) || e.Part != tt.part || !strings.HasPrefix(e.Message(), tt.want) {
				t.Fatalf("UserData() = %q, %v; want an error of %s starting %q", out, err, tt.part, tt.want)
			}
			// Check finds the same, without output.
			if err := Check(tt.in); !errors.As(err, &e) || e.Part != tt.part || !strings.HasPrefix(e.Message(), tt.want) {
				t.Fatalf("Check() = %v; want an error of %s starting %q", err, tt.part, tt.want)
			}
		})
	}
}

// Check reports every part's problem at once, each an *Error with its part and path.
func TestCheckReportsEveryPart(t *testing.T) {
	err := Check(Input{User: []byte("#cloud-config\nruncmd: [a\n"), Rancher: []byte("#cloud-config\nhostname: [a]\n"), SSHPassword: "a\nb"})
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not an *Error", e)
		}
		got = append(got, ce.Part.String()+"|"+ce.Path)
	}
	if want := []string{"user data|", "Rancher's cloud-config|hostname", "SSH password|"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Check found %q, want %q: %v", got, want, err)
	}
	if err := Check(Input{Hostname: "m", User: []byte("#cloud-config\nruncmd: echo\n"), Rancher: []byte(rancherDoc)}); err == nil ||
		err.(*Error).Path != "runcmd" || err.(*Error).Part != PartUser {
		t.Fatalf("a rule between parts: %v", err)
	}
	if err := Check(Input{Hostname: "m", User: []byte("#cloud-config\nruncmd: [a]\n"), Rancher: []byte(rancherDoc), SSHPassword: "pw"}); err != nil {
		t.Fatalf("valid input: %v", err)
	}
}

// CheckParts reads each part a user writes on its own, as Check does first; what only merging finds (a runcmd
// that is no list, a jinja template that would be merged) is left to Check.
func TestCheckPartsReadsEachPartOnItsOwn(t *testing.T) {
	err := CheckParts([]byte("#cloud-config\nruncmd: [a\n"), []byte("#cloud-config\nhostname: [a]\n"), "a\nb")
	whole := Check(Input{User: []byte("#cloud-config\nruncmd: [a\n"), Rancher: []byte("#cloud-config\nhostname: [a]\n"), SSHPassword: "a\nb"})
	if err == nil || err.Error() != whole.Error() {
		t.Fatalf("CheckParts = %v, want Check's problems of the parts", err)
	}
	template := []byte("## template: jinja\n#cloud-config\nruncmd: [\"{{ v1.local_hostname }}\"]\nx: !!python/object foo\n")
	for _, user := range [][]byte{[]byte("#cloud-config\nruncmd: echo\n"), template} {
		if err := CheckParts(user, []byte(rancherDoc), "pw"); err != nil {
			t.Errorf("CheckParts(%q) = %v, want nil", user, err)
		}
		if err := Check(Input{Hostname: "m", User: user, Rancher: []byte(rancherDoc)}); err == nil {
			t.Errorf("Check(%q) accepts it", user)
		}
	}
}

// laughs is a YAML "billion laughs": n levels of ten aliases each.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("#cloud-config\nl0: &l0 [x]\n")
	for i := 1; i <= n; i++ {
		prev := "*l" + string(rune('0'+i-1))
		if i > 9 {
			prev = "*l" + string(rune('a'+i-10))
		}
		name := "l" + string(rune('0'+i))
		if i > 9 {
			name = "l" + string(rune('a'+i-10))
		}
		b.WriteString(name + ": &" + name + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	return b.String()
}

func TestUserDataShapes(t *testing.T) {
	t.Run("nothing but the root user's default", func(t *testing.T) {
		out, err := UserData(Input{})
		if err != nil || string(out) != "#cloud-config\ndisable_root: false\n" {
			t.Fatalf("UserData(Input{}) = %q, %v", out, err)
		}
	})
	t.Run("a comment-only user document keeps its comments", func(t *testing.T) {
		out, err := UserData(Input{Hostname: "m", User: []byte("#cloud-config\n# nothing yet\n")})
		if err != nil || !bytes.Contains(out, []byte("# nothing yet\n")) {
			t.Fatalf("UserData() = %q, %v", out, err)
		}
	})
	t.Run("a script mentioning MIME-Version is a script", func(t *testing.T) {
		out, err := UserData(Input{Hostname: "m", User: []byte("#!/bin/sh\necho 'MIME-Version: 1.0'\n")})
		if err != nil {
			t.Fatal(err)
		}
		parts := mimeParts(t, out)
		if len(parts) != 2 || parts[1].typ != "text/x-shellscript" || !strings.Contains(parts[1].body, "echo 'MIME-Version: 1.0'") {
			t.Fatalf("parts = %+v", parts)
		}
	})
	t.Run("non-ASCII parts go in base64", func(t *testing.T) {
		out, err := UserData(Input{Hostname: "m", User: []byte("#!/bin/sh\necho grüß\n")})
		if err != nil {
			t.Fatal(err)
		}
		parts := mimeParts(t, out)
		if len(parts) != 2 || parts[1].body != "#!/bin/sh\necho grüß\n" || !bytes.Contains(out, []byte("Content-Transfer-Encoding: base64")) {
			t.Fatalf("parts = %+v\n%s", parts, out)
		}
	})
	t.Run("a jinja template is sent apart when the driver's values hold jinja", func(t *testing.T) {
		out, err := UserData(Input{Hostname: "m", SSHPassword: "{{x}}", User: []byte("## template: jinja\n#cloud-config\ntimezone: UTC\n")})
		if err != nil {
			t.Fatal(err)
		}
		parts := mimeParts(t, out)
		if len(parts) != 2 || parts[1].typ != "text/jinja2" || parts[1].header.Get("Merge-Type") != mergeHeader {
			t.Fatalf("parts = %+v", parts)
		}
	})
	t.Run("a jinja template that is not YAML and has no jinja is an error", func(t *testing.T) {
		_, err := UserData(Input{User: []byte("## template: jinja\n#cloud-config\na: [\n")})
		if e := (*Error)(nil); !errors.As(err, &e) || e.Part != PartUser || !strings.HasPrefix(e.Message(), "not valid YAML") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("anchors stay unique", func(t *testing.T) {
		// Two MIME parts both define &a; a top-level merge key copies an anchored node.
		user := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n" +
			"x: &a [1]\ny: *a\nbase: &base {k: &inner [2]}\n<<: *base\n--b\nContent-Type: text/cloud-config\n\nz: &a [3]\nw: *a\n--b--\n"
		m, out := render(t, Input{Hostname: "m", User: []byte(user)})
		want(t, m["y"], []any{1})
		want(t, m["w"], []any{3})
		want(t, m["k"], []any{2})
		seen := map[string]bool{}
		for _, a := range regexp.MustCompile(`&([A-Za-z0-9_]+)`).FindAllStringSubmatch(string(out), -1) {
			if seen[a[1]] {
				t.Fatalf("anchor &%s written twice:\n%s", a[1], out)
			}
			seen[a[1]] = true
		}
	})
}

// mimePart is a rendered MIME part read back: its type as cloud-init sees it, decoded body and headers.
type mimePart struct {
	typ, body string
	header    textproto.MIMEHeader
}

func mimeParts(t *testing.T, out []byte) []mimePart {
	t.Helper()
	leaves, err := readMIME(out)
	if err != nil {
		t.Fatalf("not MIME: %v\n%s", err, out)
	}
	var parts []mimePart
	for _, l := range leaves {
		typ, payload, err := l.effectiveType(userdata.NewBudget(userdata.MaxSize))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, mimePart{typ, string(payload), l.header})
	}
	return parts
}
