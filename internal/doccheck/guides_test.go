package doccheck

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxREADMELines is the README's bound: what it is, the routes, the commands; the rest is in the guides.
const maxREADMELines = 250

// The README stays short, and every guide of docs/ (and CONTRIBUTING.md) opens, under its title, with whom it is
// for and what the reader has at its end.
func TestGuidesOpenWithWhoTheyAreFor(t *testing.T) {
	readme, err := ReadFile(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(readme, "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move detail into a guide and link it", n, maxREADMELines)
	}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(guides) < 10 {
		t.Fatalf("guides %v, %v", guides, err)
	}
	for _, path := range append(guides, filepath.Join(root, "CONTRIBUTING.md")) {
		rel, _ := filepath.Rel(root, path)
		md, err := ReadFile(root, rel)
		if err != nil {
			t.Fatal(err)
		}
		// The first paragraph after the title.
		_, rest, _ := strings.Cut(md, "\n\n")
		first, _, _ := strings.Cut(rest, "\n\n")
		first = Normalize(first)
		if !strings.HasPrefix(first, "**For** ") || !strings.Contains(first, "**At the end**") {
			t.Errorf("%s does not open with \"**For** <whom> … **At the end** <what they have>\" under its title", filepath.ToSlash(rel))
		}
	}
}

// gnuOnly are command options that only GNU coreutils have, which a guide's commands must not use: the release
// ships darwin binaries, and macOS's base64 has no -w.
var gnuOnly = regexp.MustCompile(`base64 -w|base64 --wrap`)

// The guides' commands run on Linux and macOS alike.
func TestCommandsArePortable(t *testing.T) {
	for _, file := range markdownFiles(t) {
		md, err := ReadFile(root, file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(md, "\n") {
			if gnuOnly.MatchString(line) {
				t.Errorf("%s:%d: %s is GNU-only (macOS's base64 has no -w): write base64 < FILE | tr -d '\\n'", file, i+1, gnuOnly.FindString(line))
			}
		}
	}
}
