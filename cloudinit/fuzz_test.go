package cloudinit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// FuzzUserData: UserData never panics, and whatever it returns reads back: a cloud-config (with or without the
// jinja line) parses as a YAML mapping, and a MIME message parses with every text/cloud-config part a YAML
// mapping. With testdata's Rancher file (or none), a single cloud-config's hostname is the machine's and
// Rancher's install command is its last runcmd entry.
func FuzzUserData(f *testing.F) {
	for _, c := range goldenCases {
		if b, err := os.ReadFile(filepath.Join("testdata", "userdata", c.name, "user-data")); err == nil {
			f.Add(b, []byte(nil), c.rancher, c.in.SSHPassword, c.in.SSHUser, c.in.InstallGuestAgent)
		}
	}
	f.Add([]byte("#cloud-config\na: &x [*x]\n"), []byte("#cloud-config\nhostname: h\nruncmd: [x]\n"), false, "", "", true)
	f.Add([]byte("#cloud-config\nusers: default, bob\nruncmd: &r [a]\nbootcmd: *r\n<<: {hostname: x}\n"), []byte(nil), true, "on", "ubuntu", true)
	rancher, err := os.ReadFile(filepath.Join("testdata", "rancher-install.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, user, otherRancher []byte, withRancher bool, password, sshUser string, agent bool) {
		in := Input{Hostname: "m1", SSHUser: sshUser, SSHPassword: password, InstallGuestAgent: agent,
			SSHAuthorizedKeys: []string{driverKey}, User: user, Rancher: otherRancher}
		if withRancher {
			in.Rancher = rancher
		}
		// Only the real Rancher file, or none, says what the hostname and the last command must be.
		checkRancher := withRancher || len(otherRancher) == 0
		out, err := UserData(in)
		if err != nil {
			return
		}
		wantHost := "m1"
		if withRancher {
			wantHost = rancherHostname
		}
		switch {
		case bytes.HasPrefix(out, []byte(headerCloudConfig+"\n")), bytes.HasPrefix(out, []byte(headerJinja+"\n"+headerCloudConfig+"\n")):
			m := parseMapping(t, out)
			if checkRancher && m["hostname"] != wantHost {
				t.Fatalf("hostname = %v, want %q\n%s", m["hostname"], wantHost, out)
			}
			if runcmd, _ := m["runcmd"].([]any); withRancher && (len(runcmd) == 0 || runcmd[len(runcmd)-1] != installCommand) {
				t.Fatalf("runcmd = %v, want %q last\n%s", runcmd, installCommand, out)
			}
		default:
			leaves, err := readMIME(out)
			if err != nil || len(leaves) == 0 {
				t.Fatalf("output is neither cloud-config nor MIME: %v\n%s", err, out)
			}
			for i, l := range leaves {
				typ, payload, err := l.effectiveType(userdata.NewBudget(userdata.MaxSize))
				if err != nil {
					t.Fatalf("part %d: %v", i, err)
				}
				if i == 0 && typ != "text/cloud-config" && typ != "text/jinja2" {
					t.Fatalf("the first part is %s", typ)
				}
				if typ == "text/cloud-config" {
					parseMapping(t, payload)
				}
			}
		}
	})
}

// parseMapping parses a rendered cloud-config (its header lines are YAML comments) into a mapping.
func parseMapping(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(doc, &m); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, doc)
	}
	return m
}
