package bounded

import "testing"

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB",
		64 << 10: "64 KiB", 1 << 20: "1 MiB", 3<<20 + 1<<20/5: "3.2 MiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
