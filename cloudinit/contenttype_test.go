package cloudinit

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

func TestContentType(t *testing.T) {
	tests := []struct{ in, want string }{
		{"#cloud-config\na: 1", TypeCloudConfig},
		{"  \n\t#Cloud-Config\n", TypeCloudConfig},             // cloud-init lstrips and lowercases
		{"\ufeff#cloud-config\n", TypeCloudConfig},             // a byte order mark is skipped
		{"#cloud-config-archive\n- a", TypeCloudConfigArchive}, // longest prefix first
		{"#cloud-config-jsonp\n[]", TypeCloudConfigJSONP},
		{"#!/bin/bash\necho", TypeShellScript},
		{"#include https://example.com/x", TypeInclude},
		{"#include-once\nhttps://example.com/x", TypeIncludeOnce},
		{"#cloud-boothook\n#!/bin/sh", TypeBoothook},
		{"#part-handler\ndef list_types(): pass", TypePartHandler},
		{"## template: jinja\n#cloud-config", TypeJinja},
		{"## Template: Jinja\n", TypeJinja},
		{"# a comment\n#cloud-config", ""},
		{"packages: [x]", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ContentType([]byte(tt.in)); got != tt.want {
			t.Errorf("ContentType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIsMIME(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"Content-Type: multipart/mixed; boundary=x\nMIME-Version: 1.0\n\n", true},
		{"mime-version: 1.0\ncontent-type: text/x-shellscript\n\n#!/bin/sh", true},
		// cloud-init looks only at the first 4096 bytes (user_data.convert_string).
		{"#cloud-config\n# " + strings.Repeat("x", 4096) + "\n# MIME-Version: 1.0\n", false},
		{"Content-Type: multipart/mixed; boundary=x\n\n--x--\n", false}, // no MIME-Version: not MIME to cloud-init
		{"#cloud-config\n", false},
	}
	for _, tt := range tests {
		if got := IsMIME([]byte(tt.in)); got != tt.want {
			t.Errorf("IsMIME(%.40q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestIsUserData(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want bool
	}{
		{"cloud-config", []byte("#cloud-config\n"), true},
		{"script", []byte("#!/bin/sh\necho hi\n"), true},
		{"jinja", []byte("## template: jinja\n#cloud-config\n"), true},
		{"include", []byte("#include\nhttps://example.com/ud\n"), true},
		{"MIME", []byte("MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\n#!/bin/sh\n"), true},
		{"gzip", gzipped(t, "#cloud-config\n"), true},
		{"YAML mapping without the header", []byte("packages: [qemu-guest-agent]\n"), true},
		{"empty", nil, false},
		{"blank", []byte(" \n\t"), false},
		{"plain word", []byte("hello"), false},
		{"YAML list", []byte("- a\n- b\n"), false},
		{"empty mapping", []byte("{}"), false},
		{"binary", []byte{0xff, 0xfe, 0x00, 0x01}, false},
	}
	for _, tt := range tests {
		if got := IsUserData(tt.in); got != tt.want {
			t.Errorf("%s: IsUserData(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

// Base64-encoded user data of any format is decoded when IsUserData is the check; a literal is kept.
func TestDecodeBase64OrPlainWithIsUserData(t *testing.T) {
	for _, plain := range []string{"#!/bin/sh\necho hi\n", "## template: jinja\n#cloud-config\n", "packages: [x]\n"} {
		enc := base64.StdEncoding.EncodeToString([]byte(plain))
		if got, was := userdata.DecodeBase64OrPlain(enc, IsUserData); string(got) != plain || !was {
			t.Errorf("userdata.DecodeBase64OrPlain(b64(%q)) = %q, %v", plain, got, was)
		}
		if got, was := userdata.DecodeBase64OrPlain(plain, IsUserData); string(got) != plain || was {
			t.Errorf("userdata.DecodeBase64OrPlain(%q) = %q, %v", plain, got, was)
		}
	}
}
