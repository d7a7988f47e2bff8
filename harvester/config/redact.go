package config

import (
	"regexp"
	"strconv"
	"strings"
)

// Problems are shown by Rancher in its UI and kept in its logs, so a value that may be a credential is never
// repeated in one. Messages quote the values they are about with %q; Redact looks at each quoted value and hides
// those that may hold a secret, and drops the user information (user:password@) of any URL. It errs on the side
// of hiding: a hidden value costs the reader a detail, a shown credential cannot be taken back.

// hiddenValue replaces a quoted value that may hold a secret.
const hiddenValue = "(a value not shown: it may hold a secret)"

var (
	goQuoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	urlUserinfo  = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s"@]*@`)
	longToken    = regexp.MustCompile(`[A-Za-z0-9]{32,}`)
	secretMarker = regexp.MustCompile(`(?i)token|passw|secret|bearer|private|-----begin|apiversion|client-key|credential|authorization`)
)

// Redact returns msg with every quoted value that may hold a secret hidden, any other run of 32 letters and digits
// (a token as a YAML key, say) hidden, and URLs without user information.
func Redact(msg string) string {
	msg = goQuoted.ReplaceAllStringFunc(msg, func(q string) string {
		v, err := strconv.Unquote(q)
		if err != nil || maySecret(v) {
			return hiddenValue
		}
		return q
	})
	msg = longToken.ReplaceAllString(msg, "(not shown)")
	return urlUserinfo.ReplaceAllString(msg, "$1")
}

// maySecret reports whether a value may be or hold a credential: a document (several lines), anything longer than
// a Kubernetes name, a run of 32 letters and digits (tokens, keys, JWT segments), or a word that marks one.
func maySecret(v string) bool {
	return len(v) > 253 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) ||
		longToken.MatchString(v) || secretMarker.MatchString(v)
}

// Parsers quote what they could not read: sigs.k8s.io/yaml prints a map key it cannot convert with its whole value,
// the API machinery an unknown kind. What a document someone else wrote (a kubeconfig, a machine config) failed on
// is told only in the words of messages known to quote nothing: the YAML parser's syntax errors, the JSON
// decoder's type and base64 errors. Any other message gives only its line, when it says one.
var (
	safeParseErrors = []*regexp.Regexp{
		regexp.MustCompile(`^yaml: (line \d+: )?[A-Za-z ,<>'-]+$`),
		regexp.MustCompile(`^(couldn't get version/kind; json parse error: )?json: cannot unmarshal [a-z]+ into Go (struct field [A-Za-z0-9_.\[\]-]+|value) of type [A-Za-z0-9_.\[\]*]+$`),
		regexp.MustCompile(`^illegal base64 data at input byte \d+$`),
	}
	parseErrorLine = regexp.MustCompile(`\bline (\d+)\b`)
)

// ParseErrorText is what a YAML or JSON parse error may say of a document that may hold secrets: the error
// itself when it is of a form that quotes nothing, else that the document does not parse, at the line the
// error names.
func ParseErrorText(err error) string {
	msg := strings.TrimSpace(err.Error())
	for _, safe := range safeParseErrors {
		if safe.MatchString(msg) {
			return Redact(msg)
		}
	}
	if m := parseErrorLine.FindStringSubmatch(msg); m != nil {
		return "it does not parse at line " + m[1] + " (the parser's message is not shown: it quotes the document)"
	}
	return "it does not parse (the parser's message is not shown: it quotes the document)"
}
