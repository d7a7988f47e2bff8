// Package readmetest checks the generated sections of the README and the guides in docs/: the text between a start
// and an end marker is what the code renders, and -update-readme rewrites it.
package readmetest

import (
	"os"
	"strings"
	"testing"
)

// Generated fails t when the text between start and end in the Markdown file at path is not body, naming command, the
// command that rewrites it; with update it rewrites the file instead.
func Generated(t *testing.T, path, start, end, body, command string, update bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, start), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated section's markers %q … %q", path, start, end)
	}
	want := readme[:i] + start + "\n" + body + readme[j:]
	if update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme != want {
		t.Errorf("%s's section %s is out of date: run %s", path, start, command)
	}
}
