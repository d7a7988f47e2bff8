package userdata

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGunzip(t *testing.T) {
	multi := append(gz(t, "#cloud-config\n"), gz(t, "a: 1\n")...)
	tests := []struct {
		name    string
		in      []byte
		want    string
		wantErr string
	}{
		{"one member", gz(t, "#cloud-config\n"), "#cloud-config\n", ""},
		{"two members read as one stream, like Python's gzip", multi, "#cloud-config\na: 1\n", ""},
		{"truncated", gz(t, "#cloud-config\n")[:12], "", "gzip: "},
		{"not gzip", []byte("#cloud-config"), "", "gzip: "},
		{"inflates past 1 MiB", gz(t, strings.Repeat("a", MaxSize+1)), "", "more than 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Gunzip(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Gunzip() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Gunzip() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestIsGzip(t *testing.T) {
	if !IsGzip(gz(t, "x")) || IsGzip([]byte("#cloud-config")) || IsGzip([]byte{0x1f}) {
		t.Fatal("IsGzip does not go by the gzip magic number")
	}
	if !bytes.HasPrefix(gz(t, ""), []byte{0x1f, 0x8b}) {
		t.Fatal("test helper does not write gzip")
	}
}
