// Command measure prints the figures docs/development.md gives of the code's seams, computed from the code:
//
//	go run ./hack/measure [-C DIR] [-v]
//
// For each of --harvester-ip-pool, --harvester-vm-patch and --harvester-user-data-secret, the files and packages
// the flag crosses from flag to cluster (program.crossed): the declarations that name the flag's constant or read
// the Config field its parser fills (or the type that holds its value), then also those that refer to such a
// declaration (their callers and users, one step), as the type checker (go/types) resolves every name, over the
// non-test files of the module's packages the plugin is built from. Then the uses of the type any in the non-test
// Go files under harvester/, and the files and lines of package harvester (its non-test files, every line).
//
// -C measures another checkout, e.g. a worktree of an earlier commit for a "before" figure; -v lists the files.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("C", ".", "the checkout to measure")
	verbose := flag.Bool("v", false, "list the files")
	flag.Parse()
	if err := run(*dir, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func run(dir string, verbose bool) error {
	prog, err := load(dir)
	if err != nil {
		return err
	}
	for _, name := range []string{"harvester-ip-pool", "harvester-vm-patch", "harvester-user-data-secret"} {
		naming, reaching, err := prog.crossed(name)
		if err != nil {
			return err
		}
		fmt.Printf("--%s: named or read in %s; with what refers to those, %s\n", name, count(naming), count(reaching))
		if verbose {
			for _, f := range reaching {
				mark := " "
				if sort.SearchStrings(naming, f) < len(naming) && naming[sort.SearchStrings(naming, f)] == f {
					mark = "*"
				}
				fmt.Printf("  %s %s\n", mark, f)
			}
		}
	}
	anys, err := countAny(filepath.Join(dir, "harvester"))
	if err != nil {
		return err
	}
	fmt.Printf("any in the non-test code under harvester/: %d\n", anys)
	files, lines, err := countLines(filepath.Join(dir, "harvester"))
	if err != nil {
		return err
	}
	fmt.Printf("package harvester: %d files, %d lines\n", files, lines)
	return nil
}

// count words a list of files: "14 files, 5 packages".
func count(files []string) string {
	pkgs := map[string]bool{}
	for _, f := range files {
		pkgs[filepath.Dir(f)] = true
	}
	return fmt.Sprintf("%d files, %d packages", len(files), len(pkgs))
}

// countAny counts the identifiers any in the non-test Go files under root: Go's any, as no declaration of the
// module takes the name.
func countAny(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			if id, ok := node.(*ast.Ident); ok && id.Name == "any" {
				n++
			}
			return true
		})
		return nil
	})
	return n, err
}

// countLines counts the non-test Go files of the package in dir, and their lines.
func countLines(dir string) (files, lines int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, 0, err
		}
		files++
		lines += strings.Count(string(b), "\n")
	}
	return files, lines, nil
}
