package doccheck

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is a link or image of a Markdown file: its target as written, and the line it is on.
type Link struct {
	Target string
	Line   int
}

// Prose returns the lines of md outside fenced code blocks, each with its 1-based number; a fenced block's lines
// come back empty, so numbers stay right.
func Prose(md string) []string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			for _, c := range t[3:] {
				if c != rune(fence[0]) {
					break
				}
				fence += string(c)
			}
			lines[i] = ""
		}
	}
	return lines
}

// span is a code span of a line: where it starts and ends, its backticks included, and its text.
type span struct {
	from, to int
	text     string
}

// spansOf returns line's code spans, each delimited by a run of backticks and the next run of as many
// (CommonMark: one space trimmed from each end of the text when both have one).
func spansOf(line string) []span {
	var out []span
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := strings.Index(line[i+n:], strings.Repeat("`", n))
		if end < 0 {
			break
		}
		text := line[i+n : i+n+end]
		if len(text) > 2 && text[0] == ' ' && text[len(text)-1] == ' ' {
			text = text[1 : len(text)-1]
		}
		out = append(out, span{from: i, to: i + n + end + n, text: text})
		i += n + end + n
	}
	return out
}

// withoutCode blanks a line's code spans, so that nothing quoted in them reads as a link.
func withoutCode(line string) string {
	b := []byte(line)
	for _, s := range spansOf(line) {
		for k := s.from; k < s.to; k++ {
			b[k] = ' '
		}
	}
	return string(b)
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]^]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	htmlTarget = regexp.MustCompile(`<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"`)
)

// Links returns the links and images of md outside code: inline ones, reference definitions and HTML a and img
// elements.
func Links(md string) []Link {
	var out []Link
	for i, line := range Prose(md) {
		line = withoutCode(line)
		for _, re := range []*regexp.Regexp{inlineLink, htmlTarget} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, Link{Target: m[1], Line: i + 1})
			}
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
	}
	return out
}

var (
	heading    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	explicitID = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// Anchors returns the fragments md's headings and explicit anchors (<a id="…">, <a name="…">) can be reached by,
// as GitHub makes them: the heading's text as rendered (code marks, link targets and HTML tags gone), lowercased,
// every character that is not a letter, a digit, a space, '-' or '_' dropped, spaces turned to '-'; a heading text
// that repeats gets -1, -2, … (github.com/gjtorikian/html-pipeline's TableOfContentsFilter, which github.com runs).
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range Prose(md) {
		for _, m := range explicitID.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is the anchor GitHub makes of a heading's Markdown text.
func Slug(text string) string {
	text = mdLinkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.NewReplacer("`", "", "**", "", "__", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Quote is a message as a guide quotes it: the code span of a line that starts with "> ", the form a
// troubleshooting entry gives the message it is about.
type Quote struct {
	Text string // white space folded
	Line int
}

// Quotes returns md's message quotes: each code span on a blockquote line (outside fenced code).
func Quotes(md string) []Quote {
	var out []Quote
	for i, line := range Prose(md) {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "> `") {
			continue
		}
		for _, s := range spansOf(t) {
			out = append(out, Quote{Text: Normalize(s.text), Line: i + 1})
		}
	}
	return out
}

// space folds runs of white space, so that a message wrapped over lines in a guide matches.
var space = regexp.MustCompile(`\s+`)

// Normalize folds white space into one space and trims it.
func Normalize(s string) string { return strings.TrimSpace(space.ReplaceAllString(s, " ")) }
