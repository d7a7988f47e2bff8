package userdata

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// FuzzDecodeBase64OrPlain: never panics; a decoded value is UTF-8 text that passes the check and encodes back
// to the input; anything else comes back unchanged.
func FuzzDecodeBase64OrPlain(f *testing.F) {
	for _, s := range []string{"", "#cloud-config\n", b64("#cloud-config\n"), b64("#!/bin/sh\n")[:10], "abcd", "ab+-", "Iy\nEv", "===="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, was := DecodeBase64OrPlain(value, isCloudConfig)
		if !was {
			if string(got) != value {
				t.Fatalf("literal %q came back as %q", value, got)
			}
			return
		}
		if !utf8.Valid(got) || !isCloudConfig(got) {
			t.Fatalf("decoded %q to %q, which is not user data", value, got)
		}
		compact := strings.Join(strings.Fields(value), "")
		std := strings.TrimRight(base64.StdEncoding.EncodeToString(got), "=")
		url := strings.TrimRight(base64.URLEncoding.EncodeToString(got), "=")
		// The last character may differ in its unused low bits (the decoder is not strict about them).
		trimmed := strings.TrimRight(compact, "=")
		if len(trimmed) != len(std) || (trimmed[:len(std)-1] != std[:len(std)-1] && trimmed[:len(url)-1] != url[:len(url)-1]) {
			t.Fatalf("decoded %q to %q, which encodes back to %q", value, got, std)
		}
	})
}

// FuzzReadFileOrInline: never panics; inline values come back as given; anything read is at most MaxSize.
func FuzzReadFileOrInline(f *testing.F) {
	for _, s := range []string{"", " ", "#cloud-config\n", "a\nb", "/nonexistent/file", ".", "testdata"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := ReadFileOrInline(value)
		trimmed := strings.TrimSpace(value)
		switch {
		case trimmed == "":
			if got != nil || err != nil {
				t.Fatalf("blank %q gave %q, %v", value, got, err)
			}
		case strings.HasPrefix(trimmed, "#") || strings.ContainsAny(value, "\r\n"):
			if !bytes.Equal(got, []byte(value)) || err != nil {
				t.Fatalf("inline %q gave %q, %v", value, got, err)
			}
		case err != nil:
			msg := err.Error()
			if !strings.HasPrefix(msg, "cannot read it as a file path: ") || !strings.HasSuffix(msg, acceptedForms) {
				t.Fatalf("error %q does not say what was wrong and what is accepted", err)
			}
			// The value is never quoted (the OS's reason is short, and the fixed text cannot hold a long value).
			if len(value) > 40 && strings.Contains(msg, value) {
				t.Fatalf("error %q quotes the value", err)
			}
		case len(got) > MaxSize:
			t.Fatalf("read %d bytes from %q", len(got), value)
		}
	})
}
