package userdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileOrInline(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "modified-user-data")
	content := "#cloud-config\nhostname: m1\nruncmd:\n- sh /usr/local/custom_script/install.sh\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name, value, want string
		wantErr           []string // substrings of the error
	}{
		{name: "empty", value: ""},
		{name: "blank", value: "  "},
		{name: "file written by rancher-machine", value: file, want: content},
		{name: "inline cloud-config (rancher/rancher#47979)", value: "#cloud-config\nruncmd: [a]\n", want: "#cloud-config\nruncmd: [a]\n"},
		{name: "inline one line starting with #", value: "#cloud-config", want: "#cloud-config"},
		{name: "inline without # but with a line break", value: "runcmd:\n- a\n", want: "runcmd:\n- a\n"},
		{name: "missing file", value: missing, wantErr: []string{"cannot read it as a file path: no such file or directory (the value is not shown"}},
		{name: "directory", value: dir, wantErr: []string{"cannot read it as a file path: it is a directory, not a regular file"}},
		{name: "device", value: os.DevNull, wantErr: []string{"cannot read it as a file path: it is a character device, not a regular file"}},
		{name: "over 1 MiB", value: big, wantErr: []string{"cannot read it as a file path: it is 1048577 bytes, over the 1 MiB limit"}},
		// One-line values that are not paths: a credential pasted inline must not be repeated in the error.
		{name: "a token pasted inline", value: "token: k10abc::server:5e3cret", wantErr: []string{"no such file or directory", acceptedForms}},
		{name: "a bearer token", value: "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", wantErr: []string{"no such file or directory"}},
		{name: "a URL with credentials", value: "https://user:p4ssw0rd@example.com/user-data", wantErr: []string{"no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFileOrInline(tt.value)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ReadFileOrInline(%q) = %q, want an error", tt.value, got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if strings.Contains(err.Error(), tt.value) {
					t.Errorf("error %q quotes the value", err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ReadFileOrInline(%q) = %q, %v; want %q", tt.value, got, err, tt.want)
			}
		})
	}
}
