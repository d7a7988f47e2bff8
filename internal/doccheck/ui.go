package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// UIL10n is where the UI extension keeps its words, below the module's root (Rancher's extensions keep theirs in
// l10n/en-us.yaml, rancher/ui-plugin-examples).
const UIL10n = "ui/pkg/hcivm/l10n/en-us.yaml"

// uiSources is the UI extension's code, below the module's root.
const uiSources = "ui/pkg/hcivm"

// UIMessages returns what the UI extension's forms can show a user as an error or a warning: from its l10n file,
// every text under a key named errors and every text whose key ends in Error or Warning (a placeholder {name}
// stands for a value); from its code, the texts written there rather than in the l10n file — the messages its
// validation adds (add(field, '…')), the errors it sets (this.error, this.loadError) and the errors it returns to
// Rancher's form (errors: ['…']), a template's ${…} standing for a value.
func UIMessages(root string) ([]Message, error) {
	var out []Message
	raw, err := os.ReadFile(filepath.Join(root, UIL10n))
	switch {
	case err == nil:
		if out, err = l10nMessages(raw); err != nil {
			return nil, err
		}
	case !os.IsNotExist(err):
		return nil, err
	}
	inCode, err := jsMessages(root)
	return append(out, inCode...), err
}

func l10nMessages(raw []byte) ([]Message, error) {
	var tree map[string]any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("%s: %w", UIL10n, err)
	}
	var out []Message
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				walk(append(append([]string(nil), path...), k), sub)
			}
		case string:
			last := path[len(path)-1]
			inErrors := false
			for _, p := range path[:len(path)-1] {
				inErrors = inErrors || p == "errors"
			}
			if inErrors || strings.HasSuffix(last, "Error") || strings.HasSuffix(last, "Warning") {
				out = append(out, Message{Pos: UIL10n + ": " + strings.Join(path, "."), Sink: "l10n", Format: v})
			}
		}
	}
	walk(nil, tree)
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out, nil
}

var (
	// jsString is a quoted or template string of JavaScript.
	jsString = `(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|` + "`" + `((?:[^` + "`" + `\\]|\\.)*)` + "`" + `)`
	jsAdd    = regexp.MustCompile(`\badd\(\s*[^,()]+,\s*` + jsString + `\s*\)`)
	jsSet    = regexp.MustCompile(`\bthis\.(?:error|loadError)\s*=\s*` + jsString)
	jsErrors = regexp.MustCompile(`\berrors:\s*\[([^\]]*)\]`)
	jsAny    = regexp.MustCompile(jsString)
	jsHole   = regexp.MustCompile(`\$\{[^}]*\}`)
)

func jsMessages(root string) ([]Message, error) {
	var out []Message
	err := filepath.WalkDir(filepath.Join(root, uiSources), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".vue") || strings.HasSuffix(p, ".ts")) {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(raw), "\n") {
			var texts []string
			for _, re := range []*regexp.Regexp{jsAdd, jsSet} {
				for _, m := range re.FindAllStringSubmatch(line, -1) {
					texts = append(texts, m[1]+m[2]+m[3])
				}
			}
			for _, m := range jsErrors.FindAllStringSubmatch(line, -1) {
				for _, s := range jsAny.FindAllStringSubmatch(m[1], -1) {
					texts = append(texts, s[1]+s[2]+s[3])
				}
			}
			for _, s := range texts {
				s = jsHole.ReplaceAllString(s, "{x}")
				if len(word.FindAllString(Literal(s), -1)) >= minWords {
					out = append(out, Message{Pos: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), i+1), Sink: "ui", Format: s})
				}
			}
		}
		return nil
	})
	return out, err
}
