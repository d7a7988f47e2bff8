package userdata

import (
	"bytes"
	"compress/gzip"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
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

// One Budget bounds what several inflations make in all, and says what came before the one that went over.
func TestBudget(t *testing.T) {
	b := NewBudget(100 << 10)
	if _, err := b.Gunzip(gz(t, strings.Repeat("a", 60<<10))); err != nil {
		t.Fatal(err)
	}
	_, err := b.Gunzip(gz(t, strings.Repeat("b", 60<<10)))
	var se *bounded.SizeError
	if !errors.As(err, &se) || err.Error() != "gzip: inflates to more than 40 KiB, which with the 60 KiB before it "+
		"is over the 100 KiB limit" {
		t.Fatalf("second inflation: %v", err)
	}
	if err := NewBudget(10).Spend(11, "it is"); err == nil || err.Error() != "it is 11 bytes, over the 10 bytes limit" {
		t.Fatalf("Spend: %v", err)
	}
	b = NewBudget(MaxSize)
	if err := b.Spend(MaxSize-10, "it is"); err != nil || b.Left() != 10 || b.Used() != MaxSize-10 {
		t.Fatalf("Spend: %v, left %d, used %d", err, b.Left(), b.Used())
	}
	if _, err := b.Gunzip(gz(t, strings.Repeat("c", 11))); err == nil ||
		!strings.HasSuffix(err.Error(), "which with the 1024 KiB before it is over the 1 MiB limit (the most a cloud-init Secret holds)") {
		t.Fatalf("Gunzip after Spend: %v", err)
	}
}

// Refusing a gzip bomb allocates about the limit, not what the bomb inflates to: inflating stops at the limit.
func TestGunzipStopsAtTheLimit(t *testing.T) {
	bomb := gz(t, strings.Repeat("\x00", 64<<20)) // 64 MiB of zeros, about 64 KiB of gzip
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Gunzip(bomb)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Fatalf("Gunzip(bomb) = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("refusing a 64 MiB bomb allocated %d MiB", alloc>>20)
	}
}
