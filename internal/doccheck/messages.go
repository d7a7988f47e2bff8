package doccheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Message is one text the driver can print, as its source writes it.
type Message struct {
	Pos    string // file:line below the module's root
	Sink   string // the call that prints or returns it: fmt.Errorf, errors.New, Addf, logging.Infof, …
	Format string // the text with its fmt verbs (or, from the UI extension, its {placeholders})
	// Flag is the flag a problem is filed under (config.Problems.Addf's first argument, a constant such as
	// FlagDiskInfo), without dashes; "" when the call does not name one so.
	Flag string
}

func (m Message) String() string { return fmt.Sprintf("%s (%s): %q", m.Pos, m.Sink, m.Format) }

// minWords is how many words a text needs to be a message: fewer is a joiner ("%s: %w", "disk %d: %w",
// "%d times %s") whose words stand in the messages around it.
const minWords = 3

var word = regexp.MustCompile(`\pL{2,}`)

// formatArgs are the calls outside the module whose argument at that place is a message: the error
// constructors, fmt.Sprintf (which builds the parts the others print), the Info log (what Rancher's provisioning
// log shows; Debug is not shown unless asked for) and what a verb writes to its stderr.
var formatArgs = map[string]int{
	"fmt.Errorf": 0, "errors.New": 0, "fmt.Sprintf": 0, "logging.Infof": 0,
	"fmt.Fprintf": 1, "fmt.Fprintln": 1,
}

// GoMessages returns the messages of the packages in dirs (their non-test files). A message is the string given
// to a call of formatArgs, or to a function of the module at its parameter named format (config.Problems.Addf,
// the pre-flight's addf, kubeconfigErrorf, …; not logging.Debugf, whose detail only --debug shows): a literal or a sum of literals (another operand stands for a %v),
// or a string constant of its package. fmt.Fprint* count only when they write to stderr; a fmt.Sprintf inside
// panic is a broken invariant, not a message for a user.
func GoMessages(root string, dirs ...string) ([]Message, error) {
	return goTexts(root, func(words int) bool { return words >= minWords }, dirs)
}

// GoJoiners returns the joiners of the packages in dirs that hold a word of their own ("pool %s: %v", "cannot %s
// %s: %w"), found as GoMessages finds messages: the text they put around a message is printed too.
func GoJoiners(root string, dirs ...string) ([]Message, error) {
	return goTexts(root, func(words int) bool { return words > 0 && words < minWords }, dirs)
}

// goTexts returns the texts given to the sinks of the packages in dirs whose count of words keep takes.
func goTexts(root string, keep func(words int) bool, dirs []string) ([]Message, error) {
	type pkg struct {
		dir    string
		files  []*ast.File
		consts map[string]string
		format map[string]int // its functions with a parameter named format, and that parameter's place
	}
	fset := token.NewFileSet()
	var pkgs []*pkg
	anyFormat, flags := map[string]int{}, map[string]string{}
	all, err := PackageDirs(root)
	if err != nil {
		return nil, err
	}
	for _, dir := range all { // every package's functions that take a format, for the calls across packages
		if err := formatParams(fset, filepath.Join(root, dir), anyFormat, flags); err != nil {
			return nil, err
		}
	}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, err
		}
		p := &pkg{dir: dir, consts: map[string]string{}, format: map[string]int{}}
		pkgs = append(pkgs, p)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			p.files = append(p.files, f)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					if d.Tok != token.CONST {
						continue
					}
					for _, s := range d.Specs {
						vs := s.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								if v, ok := literal(vs.Values[i], nil); ok {
									p.consts[n.Name] = v
								}
							}
						}
					}
				case *ast.FuncDecl:
					i := 0
					for _, field := range d.Type.Params.List {
						for _, n := range field.Names {
							if n.Name == "format" {
								p.format[d.Name.Name] = i
							}
							i++
						}
					}
				}
			}
		}
	}
	var out []Message
	for _, p := range pkgs {
		for _, f := range p.files {
			var panics []*ast.CallExpr
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := callName(call)
				if name == "panic" {
					panics = append(panics, call)
					return true
				}
				at, ok := formatArgs[name]
				base := name[strings.LastIndex(name, ".")+1:]
				if base == "Debugf" { // detail for --debug, not what a user is told
					return true
				}
				if !ok {
					if at, ok = p.format[base]; !ok {
						at, ok = anyFormat[base]
					}
				}
				if !ok || at >= len(call.Args) || insideAny(call, panics) || strings.HasPrefix(name, "fmt.Fprint") && !toStderr(call) {
					return true
				}
				s, ok := literal(call.Args[at], p.consts)
				if !ok || !keep(len(word.FindAllString(Literal(s), -1))) {
					return true
				}
				pos := fset.Position(call.Pos())
				rel, _ := filepath.Rel(root, pos.Filename)
				m := Message{Pos: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line), Sink: name, Format: s}
				if at == 1 && base == "Addf" {
					m.Flag = flagArg(call.Args[0], p.consts, flags)
				}
				out = append(out, m)
				return true
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out, nil
}

// flagArg is the flag a call's argument names: a constant of the package, or a Flag… constant of another
// (config.FlagDiskInfo, in flags); "" for anything else (a parameter, an expression).
func flagArg(e ast.Expr, consts, flags map[string]string) string {
	switch e := e.(type) {
	case *ast.Ident:
		return consts[e.Name]
	case *ast.SelectorExpr:
		return flags[e.Sel.Name]
	}
	return ""
}

// formatParams records in into the functions of the package in dir that have a parameter named format, with its
// place, and in flags its string constants named Flag….
func formatParams(fset *token.FileSet, dir string, into map[string]int, flags map[string]string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if v, ok := literalAt(vs.Values, i); ok && strings.HasPrefix(n.Name, "Flag") {
							flags[n.Name] = v
						}
					}
				}
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			i := 0
			for _, field := range fd.Type.Params.List {
				for _, n := range field.Names {
					if n.Name == "format" {
						into[fd.Name.Name] = i
					}
					i++
				}
			}
		}
	}
	return nil
}

// PackageDirs returns the folders below root's cmd, harvester, cloudinit, userdata and internal that hold a Go
// package (a non-test file), with forward slashes: the code users run and its helpers. hack/ and e2e/ are the
// maintainers' tools and test bed.
func PackageDirs(root string) ([]string, error) {
	seen := map[string]bool{}
	for _, top := range []string{"cmd", "harvester", "cloudinit", "userdata", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == filepath.Join(root, top) && errors.Is(err, fs.ErrNotExist) {
					return nil // a tree without this folder
				}
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				seen[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// toStderr reports whether a fmt.Fprint* call writes to stderr (a writer named stderr, or os.Stderr).
func toStderr(call *ast.CallExpr) bool {
	switch w := call.Args[0].(type) {
	case *ast.Ident:
		return w.Name == "stderr"
	case *ast.SelectorExpr:
		return w.Sel.Name == "Stderr"
	}
	return false
}

func insideAny(n ast.Node, calls []*ast.CallExpr) bool {
	for _, c := range calls {
		if n.Pos() >= c.Pos() && n.End() <= c.End() {
			return true
		}
	}
	return false
}

func callName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok {
			return x.Name + "." + fn.Sel.Name
		}
		return "." + fn.Sel.Name
	}
	return ""
}

// literalAt is the string literal values[i] spells, if any.
func literalAt(values []ast.Expr, i int) (string, bool) {
	if i >= len(values) {
		return "", false
	}
	return literal(values[i], nil)
}

// literal is the string e spells: a literal, a constant of the package, or a sum of them in which any other
// operand reads as %v.
func literal(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.ParenExpr:
		return literal(e.X, consts)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, okx := literal(e.X, consts)
		y, oky := literal(e.Y, consts)
		if !okx && !oky {
			return "", false
		}
		if !okx {
			x = "%v"
		}
		if !oky {
			y = "%v"
		}
		return x + y, true
	}
	return "", false
}

// verb is a fmt verb, or %%.
var verb = regexp.MustCompile(`%[-+# 0]*(?:\[\d+\])?(?:\d+|\*)?(?:\.(?:\d+|\*)?)?(?:\[\d+\])?[a-zA-Z%]`)

// placeholder is a placeholder of the UI extension's messages: {name}, or an ICU plural {n, plural, …} taken whole.
var placeholder = regexp.MustCompile(`\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}`)

// Literal is the fixed text of a format: its verbs removed.
func Literal(format string) string {
	return placeholder.ReplaceAllString(verb.ReplaceAllStringFunc(format, func(v string) string {
		if v == "%%" {
			return "%"
		}
		return " "
	}), " ")
}

// Pattern is the regular expression a quote of the message matches: its fixed text as written, each verb or
// placeholder any text (at least one character: a quote shows it as <name>, an example value or …).
func Pattern(format string) *regexp.Regexp {
	format = Normalize(format)
	var b strings.Builder
	rest := format
	for {
		loc := firstHole(rest)
		if loc == nil {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		if rest[loc[0]:loc[1]] == "%%" {
			b.WriteString("%")
		} else {
			b.WriteString(".+?")
		}
		rest = rest[loc[1]:]
	}
	return regexp.MustCompile(b.String())
}

// firstHole is the first verb or placeholder in s.
func firstHole(s string) []int {
	v, p := verb.FindStringIndex(s), placeholder.FindStringIndex(s)
	switch {
	case v == nil:
		return p
	case p == nil || v[0] < p[0]:
		return v
	}
	return p
}

// Readable is the message as a guide shows it: each verb an ellipsis.
func Readable(format string) string {
	return Normalize(verb.ReplaceAllStringFunc(format, func(v string) string {
		if v == "%%" {
			return "%"
		}
		return "…"
	}))
}
