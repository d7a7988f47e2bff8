// Package hostile makes the worst inputs of each kind for the tests that prove the driver refuses them: special
// files that block or never end, user data that inflates far past its size, nesting past reason. Only tests
// import it.
package hostile

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// SpecialFiles makes a FIFO (whose open blocks until a writer comes) and a listening unix socket in a temporary
// directory, removed with the test, and returns their paths.
func SpecialFiles(tb testing.TB) (fifo, socket string) {
	tb.Helper()
	dir := tb.TempDir()
	fifo = filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		tb.Fatal(err)
	}
	socket = filepath.Join(dir, "sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return fifo, socket
}

// GzipParts is user data as a MIME multipart of n gzip parts, each inflating to about size bytes of cloud-config.
func GzipParts(n, size int) string {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("#cloud-config\n#" + strings.Repeat("x", size-16) + "\n")) // a bytes.Buffer never fails
	zw.Close()
	part := base64.StdEncoding.EncodeToString(zipped.Bytes())
	var b strings.Builder
	b.WriteString("Content-Type: multipart/mixed; boundary=\"B\"\nMIME-Version: 1.0\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "--B\nContent-Type: application/x-gzip\nContent-Transfer-Encoding: base64\n\n%s\n", part)
	}
	b.WriteString("--B--\n")
	return b.String()
}

// DeepJSON is a JSON list nested depth deep.
func DeepJSON(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// DoublingPatch is a JSON patch (RFC 6902) of n operations, each copying a VM's spec into itself: applied in
// full, it would make the VM 2^n times larger.
func DoublingPatch(n int) string { return GrowThenReadPatch(n, n) }

// GrowThenReadPatch is a JSON patch of n operations: copies of them copy a VM's spec into itself, doubling the VM
// each time, the others test the VM's kind. Applied one operation at a time, each would read the grown VM whole.
func GrowThenReadPatch(copies, n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/kind","value":"VirtualMachine"}`
		if i < copies {
			ops[i] = fmt.Sprintf(`{"op":"copy","from":"/spec","path":"/spec/copy%d"}`, i)
		}
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// Quantities are resource.Quantity strings that cost resource.ParseQuantity, or the arithmetic after it, work
// without bound, each with the words of quantity.Form's refusal.
var Quantities = map[string]string{
	"1e-1000000000":                         "decimal exponent beyond ±99", // the parse divides by 10^(10^9)
	"1e1000000000":                          "decimal exponent beyond ±99", // Sub and Cmp build 10^(10^9)
	"1E+1000000000":                         "decimal exponent beyond ±99",
	" 1e1000000000 ":                        "decimal exponent beyond ±99", // Quantity.UnmarshalJSON trims spaces
	"-1.5e-100":                             "decimal exponent beyond ±99",
	"0e500":                                 "decimal exponent beyond ±99", // 0, with a scale that costs the next Sub
	"1e0000000000000000000000000000000100":  "decimal exponent beyond ±99",
	"1" + strings.Repeat("0", 65):           "run of more than 64 digits",
	"0." + strings.Repeat("0", 1<<20) + "1": "run of more than 64 digits",
	strings.Repeat("9", 16<<20):             "run of more than 64 digits",
}
