package userdata

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func isCloudConfig(b []byte) bool { return bytes.HasPrefix(b, []byte("#cloud-config")) }

func TestDecodeBase64OrPlain(t *testing.T) {
	cc := "#cloud-config\npackages: [qemu-guest-agent]\n"
	std := base64.StdEncoding.EncodeToString([]byte(cc))
	tests := []struct {
		name, in, want string
		wasB64         bool
	}{
		{"empty", "", "", false},
		{"literal cloud-config", cc, cc, false},
		{"standard base64", std, cc, true},
		{"padding stripped by GetDriverOpts", std[:len(std)-2], cc, true},
		{"url-safe base64", base64.RawURLEncoding.EncodeToString([]byte(cc)), cc, true},
		{"wrapped at 76 columns", std[:20] + "\n" + std[20:], cc, true},
		// A literal made only of base64 characters is kept: its decoding is not a cloud-config.
		{"literal that is valid base64", "abcd", "abcd", false},
		{"base64 of the wrong format stays literal", base64.StdEncoding.EncodeToString([]byte("hello")), base64.StdEncoding.EncodeToString([]byte("hello")), false},
		{"base64 of binary stays literal", base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, '#'}), base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, '#'}), false},
		{"mixed alphabets are not base64", "ab+-", "ab+-", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, was := DecodeBase64OrPlain(tt.in, isCloudConfig)
			if string(got) != tt.want || was != tt.wasB64 {
				t.Fatalf("DecodeBase64OrPlain(%q) = %q, %v; want %q, %v", tt.in, got, was, tt.want, tt.wasB64)
			}
		})
	}
}
