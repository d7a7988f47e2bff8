package doccheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// root is the module's root, from this package's folder.
const root = "../.."

// markdownFiles are the Markdown files of the repository, below root with forward slashes: README.md, docs/ and
// any other, outside Node modules and build output.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every relative link of the repository's Markdown files reaches a file of the repository, and its #fragment a
// heading or an explicit anchor of that file as GitHub makes them (a link to a heading renamed or moved fails
// here, not in a reader's browser). Links to other sites are not fetched.
func TestLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		md, err := ReadFile(root, file)
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = Anchors(md)
		return anchors[file]
	}
	checked := 0
	for _, file := range files {
		md, err := ReadFile(root, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range Links(md) {
			target := l.Target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "//") {
				continue
			}
			checked++
			where := file + ":" + itoa(l.Line)
			p, frag, _ := strings.Cut(target, "#")
			dest := file
			if p != "" {
				dest = path.Clean(path.Join(path.Dir(file), p))
				if dest == ".." || strings.HasPrefix(dest, "../") || strings.HasPrefix(p, "/") {
					t.Errorf("%s: link %s leaves the repository (a reader of the clone has nothing beside it)", where, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s: link %s: no file %s in the repository", where, target, dest)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %s has a fragment into %s, which is no Markdown file", where, target, dest)
				continue
			}
			if !anchorsOf(dest)[frag] {
				t.Errorf("%s: link %s: %s has no heading or anchor %q (GitHub makes a heading's anchor of its text: lowercase, punctuation dropped, spaces as '-')", where, target, dest, frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link reader is broken")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
