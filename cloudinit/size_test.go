package cloudinit

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// gzipPartsMIME is a MIME message of n application/gzip parts (base64), each a cloud-config that inflates to
// about size bytes. The parts compress to almost nothing: n = 200 parts of 40 KB make about 60 KB of user data
// that stands for 8 MB.
func gzipPartsMIME(n, size int) []byte {
	var b bytes.Buffer
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n")
	for i := range n {
		doc := fmt.Sprintf("#cloud-config\nx-part-%d: %s\n", i, strings.Repeat("a", size))
		fmt.Fprintf(&b, "--b\nContent-Type: application/gzip\nContent-Transfer-Encoding: base64\n\n%s\n",
			wrap76(base64.StdEncoding.EncodeToString(gzipOf(doc))))
	}
	b.WriteString("--b--\n")
	return b.Bytes()
}

// allocated is how many bytes f allocates (on this goroutine's watch: no test here runs in parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// User data is bounded in all, not part by part: many gzip parts that each inflate to little, but together to
// more than 1 MiB, are refused, without inflating them all (memory stays near the limit).
func TestUserDataTotalInflatedSize(t *testing.T) {
	many := gzipPartsMIME(200, 40<<10) // 8 MB in all
	tests := []struct {
		name, want string
		user       []byte
	}{
		{"many gzip parts", "gzip: inflates to more than ", many},
		{"gzip around MIME with gzip parts", "gzip: inflates to more than ", gzipOf(string(many))},
		{"plain over 1 MiB", "it is 1.5 MiB, over the 1 MiB limit", []byte("#cloud-config\na: " + strings.Repeat("a", 3<<19) + "\n")},
		{"gzip over 1 MiB", "gzip: inflates to more than 1 MiB, over the 1 MiB limit", gzipOf("#cloud-config\na: " + strings.Repeat("a", 3<<19) + "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = UserData(Input{Hostname: "m", User: tt.user}) })
			var e *Error
			if !errors.As(err, &e) || e.Part != PartUser || !strings.Contains(e.Message(), tt.want) ||
				!strings.Contains(e.Message(), "1 MiB limit (the most a cloud-init Secret holds)") {
				t.Fatalf("UserData() error = %v, want one of the user data saying %q", err, tt.want)
			}
			t.Logf("%s (%d bytes of user data, %d KiB allocated)", err, len(tt.user), alloc>>10)
			if alloc > 32<<20 {
				t.Errorf("refusing %d bytes of user data allocated %d MiB", len(tt.user), alloc>>20)
			}
			if err := Check(Input{Hostname: "m", User: tt.user}); !errors.As(err, &e) || !strings.Contains(e.Message(), tt.want) {
				t.Fatalf("Check() = %v", err)
			}
		})
	}
	// Under the limit in all, the same kind of message is read.
	if _, err := UserData(Input{Hostname: "m", User: gzipPartsMIME(20, 40<<10)}); err != nil {
		t.Fatalf("20 parts of 40 KB: %v", err)
	}
}

// The rendered user data is bounded too: parts under the limit each may render to more than it together.
func TestUserDataRenderedSize(t *testing.T) {
	half := func(key string) []byte {
		return []byte("#cloud-config\n" + key + ": " + strings.Repeat("a", 600<<10) + "\n")
	}
	for _, tt := range []struct {
		name string
		in   Input
		part Part
	}{
		{"user data and Rancher's document", Input{Hostname: "m", User: half("a"), Rancher: half("b")}, PartUser},
		{"Rancher's document and the driver's files", Input{Hostname: "m", Rancher: half("b"),
			WriteFiles: []File{{Path: "/f", Content: strings.Repeat("x", 600<<10)}}}, PartRancher},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := UserData(tt.in)
			var e *Error
			if !errors.As(err, &e) || e.Part != tt.part ||
				!strings.HasPrefix(e.Message(), "together with the other parts renders to ") ||
				!strings.HasSuffix(e.Message(), "over the 1 MiB limit (the most a cloud-init Secret holds)") {
				t.Fatalf("UserData() error = %v", err)
			}
			if err := Check(tt.in); !errors.As(err, &e) || e.Part != tt.part {
				t.Fatalf("Check() = %v", err)
			}
		})
	}
}

// The worst user data for the budget, with as many gzip parts as a message may have (maxMIMEParts): each part a
// gzip bomb that inflates to the whole limit; parts small enough that about half of them are read (inflated and
// parsed) before the total passes the limit; and the most that is accepted, parts that together inflate to just
// under it.
func BenchmarkUserDataGzipParts(b *testing.B) {
	for _, bc := range []struct {
		name       string
		user       []byte
		wantRefuse bool
	}{
		{"refused/256 parts of 1 MiB each", gzipPartsMIME(maxMIMEParts, 1<<20), true},
		{"refused/256 parts of 8 KiB each", gzipPartsMIME(maxMIMEParts, 8<<10), true},
		{"accepted/256 parts of 3.5 KiB each", gzipPartsMIME(maxMIMEParts, 3500), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.user)))
			for b.Loop() {
				if _, err := UserData(Input{Hostname: "m", User: bc.user}); (err != nil) != bc.wantRefuse {
					b.Fatalf("UserData() error = %v", err)
				}
			}
		})
	}
}
