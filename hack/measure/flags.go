package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
)

// module is the plugin's module path.
const module = "github.com/harvester/docker-machine-driver-harvester"

// seeds are, for each flag measured, the Go name of its constant in harvester/config and the fields of
// config.Config its parser fills (harvester/config parse_*.go).
var seeds = map[string]struct {
	constant string
	fields   []string
}{
	"harvester-ip-pool":          {"FlagIPPool", []string{"IPPool", "IPPool6"}},
	"harvester-vm-patch":         {"FlagVMPatch", []string{"VMPatch"}},
	"harvester-user-data-secret": {"FlagUserDataSecret", []string{"UserDataSecret"}},
}

// listed is what go list says of a package.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Path string }
}

// program is the module's packages the plugin is built from, type-checked from source (the others are read from
// the compiler's export data), and every top-level declaration of them.
type program struct {
	pkgs  map[string]*types.Package
	decls []decl
}

// decl is one top-level declaration and the objects its code refers to.
type decl struct {
	obj  types.Object
	file string // below the checkout
	uses []types.Object
}

// load lists the plugin's packages in the checkout dir (go list -export builds what they import) and
// type-checks the module's own.
func load(dir string) (*program, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", "./cmd/docker-machine-driver-harvester")
	cmd.Dir, cmd.Stderr = root, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w", root, err)
	}
	exports := map[string]string{}
	var own []listed // -deps lists a package's dependencies before it
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == module {
			own = append(own, p)
		}
	}
	fset := token.NewFileSet()
	prog := &program{pkgs: map[string]*types.Package{}}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if p, ok := prog.pkgs[path]; ok {
			return p, nil
		}
		return gc.Import(path)
	})}
	for _, p := range own {
		files := map[*ast.File]string{}
		var parsed []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files[f], _ = filepath.Rel(root, filepath.Join(p.Dir, name))
			parsed = append(parsed, f)
		}
		pkg, err := conf.Check(p.ImportPath, fset, parsed, info)
		if err != nil {
			return nil, fmt.Errorf("type-check %s: %w", p.ImportPath, err)
		}
		prog.pkgs[p.ImportPath] = pkg
		for _, f := range parsed {
			prog.decls = append(prog.decls, declsOf(f, files[f], info)...)
		}
	}
	return prog, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// declsOf lists the top-level declarations of f with what each refers to. A declaration of several names (var a,
// b = …) refers, for each, to what the whole declares.
func declsOf(f *ast.File, file string, info *types.Info) []decl {
	var out []decl
	for _, d := range f.Decls {
		var names []*ast.Ident
		switch d := d.(type) {
		case *ast.FuncDecl:
			names = []*ast.Ident{d.Name}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name)
				case *ast.ValueSpec:
					names = append(names, s.Names...)
				}
			}
		}
		var uses []types.Object
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && info.Uses[id] != nil {
				uses = append(uses, info.Uses[id])
			}
			return true
		})
		for _, n := range names {
			if o := info.Defs[n]; o != nil {
				out = append(out, decl{obj: o, file: file, uses: uses})
			}
		}
	}
	return out
}

// crossed returns the files whose declarations name the flag or read its Config fields (naming), and those with
// the declarations that refer to one of these too (reaching), each sorted.
func (p *program) crossed(name string) (naming, reaching []string, err error) {
	s, ok := seeds[name]
	if !ok {
		return nil, nil, fmt.Errorf("no seeds known for --%s", name)
	}
	cfg := p.pkgs[module+"/harvester/config"]
	if cfg == nil {
		return nil, nil, fmt.Errorf("no package harvester/config among the plugin's")
	}
	seed := map[types.Object]bool{}
	c := cfg.Scope().Lookup(s.constant)
	if c == nil {
		return nil, nil, fmt.Errorf("harvester/config declares no %s", s.constant)
	}
	seed[c] = true
	st := cfg.Scope().Lookup("Config").Type().Underlying().(*types.Struct)
	for _, field := range s.fields {
		i := -1
		for j := range st.NumFields() {
			if st.Field(j).Name() == field {
				i = j
			}
		}
		if i < 0 {
			return nil, nil, fmt.Errorf("config.Config has no field %s", field)
		}
		seed[st.Field(i)] = true
		// The type that holds the value, when harvester/config declares it for this flag (config.IPPool).
		t := st.Field(i).Type()
		if ptr, ok := t.(*types.Pointer); ok {
			t = ptr.Elem()
		}
		if named, ok := t.(*types.Named); ok && named.Obj().Pkg() == cfg {
			seed[named.Obj()] = true
		}
	}
	// config.Config holds every flag: what refers to it refers to no flag in particular.
	whole := cfg.Scope().Lookup("Config")
	first := p.referring(seed, whole)
	both := p.referring(first, whole)
	return files(p.decls, first), files(p.decls, both), nil
}

// referring returns objs with the declarations that refer to one of them, but the declaration of skip.
func (p *program) referring(objs map[types.Object]bool, skip types.Object) map[types.Object]bool {
	out := map[types.Object]bool{}
	for o := range objs {
		out[o] = true
	}
	for _, d := range p.decls {
		if d.obj != skip && slices.ContainsFunc(d.uses, func(o types.Object) bool { return objs[o] }) {
			out[d.obj] = true
		}
	}
	return out
}

// files lists the files of the declarations in objs, sorted.
func files(decls []decl, objs map[types.Object]bool) []string {
	seen := map[string]bool{}
	for _, d := range decls {
		if objs[d.obj] {
			seen[d.file] = true
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
