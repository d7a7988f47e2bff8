package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
)

// Printed decides whether a guide's quote is a message as the driver prints it: every word of the quote is a
// fixed word of a message, in its place, or stands for one of its values — not merely a quote in which a
// message's pattern can be found. A quote is read as
//
//	[…] [prefixes] message [message …] [usage line | …]
//
// where the prefixes are what other code prints before a message (a check line's result and name, a verb's name,
// the title of the flags' problems, the flag or variable a problem is filed under), a message may follow another
// (a text built in parts, msg += …), a leading "…" leaves out the start of the first message, a trailing one the
// end of the last, and one between leaves out what lies between two. A value may be shown as <name>, "…" or an example; what a value is cannot be checked here,
// only the words around it (cmd/docker-machine-driver-harvester's tests compare whole lines the verbs print).
type Printed struct {
	formats []printedFormat
	prefix  *regexp.Regexp
	partial map[string]*regexp.Regexp // the heads and tails of formats, for quotes with a "…" end, by expression
}

// standIn is a quote's stand-in for the message a lead-in wraps: <why>, <the error>.
var standIn = regexp.MustCompile(`^ ?<[^<>]+>$`)

type printedFormat struct {
	lead  string         // the fixed text before the first value, white space folded
	start *regexp.Regexp // the message at the start of a text
	parts []piece
	// leadIn is a joiner's text before the message it ends with ("cannot %s %s: %w" without its %w): a message
	// must follow it.
	leadIn bool
}

// piece is a run of a format's fixed text, or one of its values (hole).
type piece struct {
	text string
	hole bool
}

// NewPrinted reads formats (Message.Format), the joiners that hold words of their own (GoJoiners: a joiner that
// ends with its message is a lead-in, which another message must follow) and the names of the check lines
// (CheckNames).
func NewPrinted(formats, joiners, checks []string) *Printed {
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = regexp.QuoteMeta(c)
	}
	p := &Printed{partial: map[string]*regexp.Regexp{}, prefix: regexp.MustCompile(`^(?:(?:ok|problem|skipped) (?:` +
		strings.Join(names, "|") + `) |(?:render|check|cloud-provider-config|flags): |` +
		`invalid machine configuration(?: \(\d+ problems\))?: |--[a-z0-9-]+: |\$[A-Z0-9_]+: )`)}
	add := func(format string, joiner bool) {
		format = Normalize(format)
		parts := piecesOf(format)
		if len(parts) == 0 || joiner && (len(parts) < 2 || parts[0].hole) {
			return
		}
		if lead := strings.Fields(parts[0].text); joiner && len(lead) > 0 && (lead[0] == "ok" || lead[0] == "problem" || lead[0] == "skipped") {
			return // a check line's result and name: only the names of checks, in the prefix
		}
		f := printedFormat{parts: parts}
		// A text that ends with the error it wraps ("the Harvester kubeconfig %w"), or a joiner that ends with a
		// message ("pool %s: %v"), is a lead-in: that message is quoted too, or shown as <why>.
		if len(parts) > 1 && (strings.HasSuffix(format, "%w") || joiner && strings.HasSuffix(format, "%v")) {
			f.parts, f.leadIn = parts[:len(parts)-1], true
		}
		if !f.parts[0].hole {
			f.lead = f.parts[0].text
		}
		f.start = regexp.MustCompile("^" + patternOf(f.parts))
		p.formats = append(p.formats, f)
	}
	for _, f := range formats {
		add(f, false)
	}
	for _, j := range joiners {
		add(j, true)
	}
	return p
}

// piecesOf splits a format, white space folded, into its fixed text and its values.
func piecesOf(format string) []piece {
	var out []piece
	for rest := format; rest != ""; {
		loc := firstHole(rest)
		if loc == nil {
			out = append(out, piece{text: rest})
			break
		}
		if loc[0] > 0 {
			out = append(out, piece{text: rest[:loc[0]]})
		}
		if rest[loc[0]:loc[1]] == "%%" {
			out = append(out, piece{text: "%"})
		} else {
			out = append(out, piece{hole: true})
		}
		rest = rest[loc[1]:]
	}
	return out
}

// patternOf is the regular expression of pieces: the fixed text as written, each value any text.
func patternOf(parts []piece) string {
	var b strings.Builder
	for _, p := range parts {
		if p.hole {
			b.WriteString(".+?")
		} else {
			b.WriteString(regexp.QuoteMeta(p.text))
		}
	}
	return b.String()
}

func (p *Printed) compiled(expr string) *regexp.Regexp {
	re, ok := p.partial[expr]
	if !ok {
		re = regexp.MustCompile(expr)
		p.partial[expr] = re
	}
	return re
}

// Quote reports whether quote (white space folded, as Quotes returns it) is printed by the driver.
func (p *Printed) Quote(quote string) bool {
	openStart := strings.HasPrefix(quote, "… ")
	openEnd := strings.HasSuffix(quote, " …")
	q := strings.TrimSuffix(strings.TrimPrefix(quote, "… "), " …")
	if q == "" || q == "…" {
		return false
	}
	// Where the first message may start: after any prefixes.
	starts := []int{0}
	for i := 0; i < len(starts); i++ {
		if loc := p.prefix.FindStringIndex(q[starts[i]:]); loc != nil {
			starts = append(starts, starts[i]+loc[1])
		}
	}
	seen := map[int]bool{}
	queue := append([]int(nil), starts...)
	first := map[int]bool{}
	for _, s := range starts {
		first[s] = true
	}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		if seen[at] {
			continue
		}
		seen[at] = true
		rest := q[at:]
		if after, ok := strings.CutPrefix(rest, "… "); ok && at > 0 { // a part left out: a message goes on after it
			first[len(q)-len(after)] = true
			queue = append(queue, len(q)-len(after))
			continue
		}
		if at > 0 && (rest == "" || strings.HasPrefix(rest, " usage: ") || strings.HasPrefix(rest, "usage: ") || standIn.MatchString(rest)) {
			return true
		}
		for _, f := range p.formats {
			if openStart && first[at] && !f.leadIn {
				if p.tailMatches(f, rest, &queue, at) {
					return true
				}
			}
			if !strings.HasPrefix(rest, f.lead) {
				continue
			}
			if openEnd && !f.leadIn && p.headMatches(f, rest) {
				return true
			}
			if loc := f.start.FindStringIndex(rest); loc != nil && loc[1] > 0 {
				if loc[1] == len(rest) && !f.leadIn {
					return true
				}
				queue = append(queue, at+loc[1])
			}
			// A message that ends in a value takes the rest of the text.
			if !f.leadIn && len(f.parts) > 0 && f.parts[len(f.parts)-1].hole && p.compiled("^"+patternOf(f.parts)+"$").MatchString(rest) {
				return true
			}
		}
	}
	return false
}

// tailMatches reports whether rest (a quote with its start left out) is f from one of its values on, to the end
// of the quote; a tail that ends before the quote does queues where the next message starts.
func (p *Printed) tailMatches(f printedFormat, rest string, queue *[]int, at int) bool {
	for i, part := range f.parts {
		if !part.hole {
			continue
		}
		expr := "^" + patternOf(f.parts[i:])
		if p.compiled(expr + "$").MatchString(rest) {
			return true
		}
		if loc := p.compiled(expr).FindStringIndex(rest); loc != nil {
			*queue = append(*queue, at+loc[1])
		}
	}
	return false
}

// headMatches reports whether rest (a quote with its end left out) is f up to one of its values.
func (p *Printed) headMatches(f printedFormat, rest string) bool {
	for i, part := range f.parts {
		if part.hole && p.compiled("^"+patternOf(f.parts[:i+1])).MatchString(rest) {
			return true
		}
	}
	return false
}

// checkConst is the name of a constant that names a check line: CheckNamespace, checkPoolSchema.
var checkConst = regexp.MustCompile(`^[Cc]heck[A-Z]`)

// CheckNames returns the names of the check lines `check` prints: the string constants named Check… or check…
// of the packages in dirs (below root).
func CheckNames(root string, dirs ...string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, s := range g.Specs {
						vs := s.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) && checkConst.MatchString(n.Name) {
								if v, ok := literal(vs.Values[i], nil); ok {
									out = append(out, v)
								}
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}
