package yamlnode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// This file checks a document the way cloud-init's YAML loader will construct it. cloud-init loads every
// cloud-config with safeyaml.load (yaml.load with a SafeLoader that also knows !!python/unicode), and a document
// the loader refuses is dropped whole: merged with the driver's, it would take the driver's SSH key with it, and
// the machine would boot with none of its user data. PyYAML (6.0, cloud-init 22.4's) refuses a node when:
//
//   - its tag has no constructor: anything but the standard tags of tag:yaml.org,2002: (null, bool, int, float,
//     binary, timestamp, omap, pairs, set, str, seq, map) and python/unicode, e.g. !!python/object:…, !Ref, !foo;
//   - its tag needs another kind of node (!!str on a list, !!seq on a string);
//   - its value does not construct: !!int, !!float, !!bool, !!timestamp and !!binary values are parsed by
//     SafeConstructor, and a plain (unquoted, untagged) scalar gets such a tag from PyYAML's implicit resolvers
//     (YAML 1.1), so a plain 2001-02-30 (a timestamp) or 0x_ (an int) fails too;
//   - it is a plain = or << anywhere but as a key of a mapping (the value and merge tags have no constructor);
//   - it is a merge key (<<) whose value is not a mapping or a list of mappings;
//   - it is a key of a mapping that is itself a list or a mapping (Python cannot hash it);
//   - it is a !!omap or !!pairs entry that is not a mapping of one key.
//
// The checks mirror PyYAML's code (constructor.py SafeConstructor, resolver.py Resolver) and CPython's int(),
// float() and base64 decoding, with two deliberate differences: an explicit !!merge on a key other than << is
// refused (PyYAML takes it for a merge key, the driver's merge would not), and the value of a merge key is
// checked like any other value, its tag included. Non-ASCII digits are accepted only where CPython reads them
// in base 10.

// LoadError is a node of a document that cloud-init's YAML loader cannot construct: where it is (a key path such
// as runcmd[2] or users[0].name; "" for the document's top) and why.
type LoadError struct {
	Path   string
	Reason string
}

// Error is the reason and what it means for the document; the path is left to the caller, which knows what the
// document is ("runcmd[2]: the YAML tag !Ref is not one cloud-init's YAML loader knows; …").
func (e *LoadError) Error() string {
	return e.Reason + "; cloud-init would fail to load the whole cloud-config, the driver's SSH key included"
}

// CheckLoadable reports the first node of n (a document or any node, in document order) that cloud-init's YAML
// loader cannot construct, as a *LoadError. Aliases are not followed: the node an alias names is checked where
// it is defined.
func CheckLoadable(n *yaml.Node) error {
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			if err := checkLoadable(c, "", asValue); err != nil {
				return err
			}
		}
		return nil
	}
	return checkLoadable(n, "", asValue)
}

// position is where a node stands, which decides how PyYAML constructs it.
type position int

const (
	asValue position = iota // a value, a list entry, the top of the document
	asKey                   // a key of a !!map or !!set (SafeConstructor.flatten_mapping sees it first)
)

// pyStandard are the tags cloud-init's loader constructs, with the kind of node each needs.
var pyStandard = map[string]yaml.Kind{
	"!!null": yaml.ScalarNode, "!!bool": yaml.ScalarNode, "!!int": yaml.ScalarNode, "!!float": yaml.ScalarNode,
	"!!binary": yaml.ScalarNode, "!!timestamp": yaml.ScalarNode, "!!str": yaml.ScalarNode, "!!python/unicode": yaml.ScalarNode,
	"!!seq": yaml.SequenceNode, "!!omap": yaml.SequenceNode, "!!pairs": yaml.SequenceNode,
	"!!map": yaml.MappingNode, "!!set": yaml.MappingNode,
}

// maxTagShown bounds how much of a tag a message repeats.
const maxTagShown = 40

func loadErr(path, format string, args ...any) error {
	return &LoadError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

func checkLoadable(n *yaml.Node, path string, pos position) error {
	if n == nil || n.Kind == yaml.AliasNode {
		return nil
	}
	tag, explicit := pyTag(n)
	switch tag {
	case TagMerge:
		if explicit {
			return loadErr(path, "the YAML tag !!merge can only be on a key written <<, the merge key")
		}
		return loadErr(path, "a plain << is a merge key to cloud-init's YAML loader, which cannot load one here "+
			"(only as a key of a mapping); quote it to keep it a string")
	case "!!value":
		if pos == asKey {
			return nil // flatten_mapping makes a value key a string
		}
		if explicit {
			return loadErr(path, "the YAML tag !!value can only be on a key of a mapping")
		}
		return loadErr(path, "a plain = is a value key to cloud-init's YAML loader, which cannot load one here "+
			"(only as a key of a mapping); quote it to keep it a string")
	}
	want, known := pyStandard[tag]
	switch {
	case !known:
		return loadErr(path, "the YAML tag %s is not one cloud-init's YAML loader knows (it knows !!str, !!int, "+
			"!!float, !!bool, !!null, !!timestamp, !!binary, !!seq, !!map, !!omap, !!pairs and !!set)", shownTag(n.Tag))
	case n.Kind != want:
		return loadErr(path, "the YAML tag %s needs %s, not %s", tag, kindWanted(want), KindName(n))
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return checkScalar(n, tag, explicit, path)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if tag != "!!seq" {
				if err := checkPair(Resolve(c), tag, p); err != nil {
					return err
				}
				continue
			}
			if err := checkLoadable(c, p, asValue); err != nil {
				return err
			}
		}
		return nil
	}
	return checkMapping(n, path)
}

// checkPair checks an entry of a !!omap or !!pairs: a mapping of one key, whose key and value are constructed
// as values (construct_yaml_omap, construct_yaml_pairs).
func checkPair(entry *yaml.Node, tag, path string) error {
	if entry == nil || entry.Kind != yaml.MappingNode || len(entry.Content) != 2 {
		return loadErr(path, "each entry of a %s must be a mapping of one key", tag)
	}
	if err := checkLoadable(entry.Content[0], path, asValue); err != nil {
		return err
	}
	return checkLoadable(entry.Content[1], path, asValue)
}

// checkMapping checks the pairs of a !!map or !!set: merge keys name mappings, keys can be hashed, and every key
// and value loads.
func checkMapping(m *yaml.Node, path string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if tag, explicit := pyTag(k); k.Kind == yaml.ScalarNode && tag == TagMerge {
			if explicit && k.Value != "<<" {
				return loadErr(path, "the YAML tag !!merge can only be on a key written <<, the merge key")
			}
			if err := checkMerge(v, JoinPath(path, "<<")); err != nil {
				return err
			}
			continue
		}
		name, ok := ScalarText(k)
		keyPath := JoinPath(path, name)
		if !ok {
			keyPath = path
		}
		if rk := Resolve(k); rk != nil && (rk.Kind == yaml.SequenceNode || rk.Kind == yaml.MappingNode) {
			return loadErr(keyPath, "a key is %s, which cloud-init's YAML loader cannot use as a key", KindName(rk))
		}
		if err := checkLoadable(k, keyPath, asKey); err != nil {
			return err
		}
		if err := checkLoadable(v, keyPath, asValue); err != nil {
			return err
		}
	}
	return nil
}

// checkMerge checks the value of a merge key: a mapping, or a list of mappings (flatten_mapping).
func checkMerge(v *yaml.Node, path string) error {
	r := Resolve(v)
	entries := []*yaml.Node{v}
	if r != nil && r.Kind == yaml.SequenceNode {
		entries = r.Content
		if v.Kind == yaml.AliasNode {
			entries = nil // checked where it is defined; only its kind matters here
			for _, e := range r.Content {
				if re := Resolve(e); re == nil || re.Kind != yaml.MappingNode {
					return loadErr(path, "a merge key (<<) must name a mapping or a list of mappings")
				}
			}
		}
	}
	for _, e := range entries {
		if re := Resolve(e); re == nil || re.Kind != yaml.MappingNode {
			return loadErr(path, "a merge key (<<) must name a mapping or a list of mappings")
		}
		if err := checkLoadable(e, path, asValue); err != nil {
			return err
		}
	}
	return nil
}

// checkScalar checks that a scalar's value constructs with its tag.
func checkScalar(n *yaml.Node, tag string, explicit bool, path string) error {
	var ok bool
	var what string
	switch tag {
	case TagBool:
		ok, what = pyBool(n.Value), "a boolean (true, false, yes, no, on or off)"
	case TagInt:
		ok, what = pyYAMLInt(n.Value), "an integer"
	case "!!float":
		ok, what = pyYAMLFloat(n.Value), "a number"
	case "!!timestamp":
		ok, what = pyTimestamp(n.Value), "a date or time (YYYY-MM-DD, optionally with hh:mm:ss)"
	case "!!binary":
		ok, what = pyBase64(n.Value), "base64 data"
	default: // !!null, !!str, !!python/unicode take any text
		return nil
	}
	switch {
	case ok:
		return nil
	case explicit:
		return loadErr(path, "the value tagged %s is not %s that cloud-init's YAML loader reads", tag, what)
	}
	return loadErr(path, "a plain value cloud-init's YAML loader takes for %s, but cannot read as one; "+
		"quote it to keep it a string", what)
}

// pyTag is the tag PyYAML gives n, and whether it was written: an explicit tag as written (yaml.v3 writes
// tag:yaml.org,2002:x as !!x); for a plain scalar, PyYAML's implicit resolution of YAML 1.1; !!str for other
// scalars, !!seq and !!map for collections. (yaml.v3 reads the non-specific tag `!` as no tag.)
func pyTag(n *yaml.Node) (string, bool) {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.Tag, true
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "!!seq", false
	case yaml.MappingNode:
		return "!!map", false
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return TagStr, false
	}
	return implicitTag(n.Value), false
}

// implicitResolvers are PyYAML's (resolver.py), in the order it tries them, with the first characters each is
// tried for.
var implicitResolvers = []struct {
	tag, first string
	re         *regexp.Regexp
}{
	{TagBool, "yYnNtTfFoO", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
	{"!!float", "-+0123456789.", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?` +
		`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)},
	{TagInt, "-+0123456789", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)` +
		`|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
	{TagMerge, "<", regexp.MustCompile(`^(?:<<)$`)},
	{TagNull, "~nN", regexp.MustCompile(`^(?:~|null|Null|NULL)$`)},
	{"!!timestamp", "0123456789", regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?` +
		`(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)},
	{"!!value", "=", regexp.MustCompile(`^(?:=)$`)},
}

// implicitTag is the tag PyYAML resolves a plain scalar's text to.
func implicitTag(v string) string {
	if v == "" {
		return TagNull
	}
	for _, r := range implicitResolvers {
		if strings.IndexByte(r.first, v[0]) >= 0 && r.re.MatchString(v) {
			return r.tag
		}
	}
	return TagStr
}

// shownTag is a tag as a message repeats it, cut short if long.
func shownTag(tag string) string {
	if r := []rune(tag); len(r) > maxTagShown {
		return string(r[:maxTagShown]) + "…"
	}
	return tag
}

func kindWanted(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "a scalar (text or a number)"
}

// pyBool is SafeConstructor.construct_yaml_bool: bool_values[value.lower()].
func pyBool(v string) bool {
	switch strings.ToLower(v) {
	case "yes", "no", "true", "false", "on", "off":
		return true
	}
	return false
}

// pyYAMLInt is SafeConstructor.construct_yaml_int: underscores dropped, one sign, then 0, 0b…, 0x…, 0… (octal),
// sexagesimal a:b:c or decimal, each read with Python's int().
func pyYAMLInt(value string) bool {
	v := strings.ReplaceAll(value, "_", "")
	if v == "" {
		return false
	}
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	switch {
	case v == "0":
		return true
	case strings.HasPrefix(v, "0b"):
		return pyInt(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		return pyInt(v[2:], 16)
	case v == "":
		return false
	case v[0] == '0':
		return pyInt(v, 8)
	case strings.Contains(v, ":"):
		for _, part := range strings.Split(v, ":") {
			if !pyInt(part, 10) {
				return false
			}
		}
		return true
	}
	return pyInt(v, 10)
}

// pyInt reports whether Python's int(s, base) reads s: white space around, one sign, the base's prefix (0b, 0o,
// 0x) for bases 2, 8 and 16, then digits (Unicode decimal digits too in base 10).
func pyInt(s string, base int) bool {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if prefix := map[int]string{2: "0b", 8: "0o", 16: "0x"}[base]; prefix != "" && len(s) >= 2 &&
		strings.EqualFold(s[:2], prefix) {
		s = s[2:]
	}
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r < 0x80:
			if d, err := strconv.ParseUint(string(r), 36, 8); err != nil || int(d) >= base {
				return false
			}
		case base != 10 || !unicode.IsDigit(r):
			return false
		}
	}
	return true
}

// pyYAMLFloat is SafeConstructor.construct_yaml_float: underscores dropped, lower case, one sign, then .inf,
// .nan, sexagesimal a:b:c or a number, each read with Python's float().
func pyYAMLFloat(value string) bool {
	v := strings.ToLower(strings.ReplaceAll(value, "_", ""))
	if v == "" {
		return false
	}
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	switch {
	case v == ".inf" || v == ".nan":
		return true
	case strings.Contains(v, ":"):
		for _, part := range strings.Split(v, ":") {
			if !pyFloat(part) {
				return false
			}
		}
		return true
	}
	return pyFloat(v)
}

// pyFloatSyntax is what Python's float() reads once white space is trimmed and decimal digits are ASCII.
var pyFloatSyntax = regexp.MustCompile(`^[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|(?i:inf|infinity|nan))$`)

func pyFloat(s string) bool {
	s = strings.Map(func(r rune) rune {
		if r >= 0x80 && unicode.IsDigit(r) {
			return '0'
		}
		return r
	}, strings.TrimFunc(s, unicode.IsSpace))
	return pyFloatSyntax.MatchString(s)
}

// pyTimestampSyntax is SafeConstructor.timestamp_regexp; Python's $ also matches before a final line break.
var pyTimestampSyntax = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)` +
	`(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.[0-9]*)?` +
	`(?:[ \t]*(?:Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?\n?$`)

// pyTimestamp is SafeConstructor.construct_yaml_timestamp: the text must match, and make a valid Python date or
// datetime (years 1 to 9999, a real day of the month, seconds to 59, a time zone offset under 24 hours).
func pyTimestamp(v string) bool {
	m := pyTimestampSyntax.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	year, month, day := num(m[1]), num(m[2]), num(m[3])
	if year < 1 || month < 1 || month > 12 || day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return false
	}
	if m[4] == "" {
		return true
	}
	if num(m[4]) > 23 || num(m[5]) > 59 || num(m[6]) > 59 {
		return false
	}
	return m[7] == "" || num(m[8])*60+num(m[9]) < 24*60
}

// pyBase64 is SafeConstructor.construct_yaml_binary: ASCII text that CPython's base64.decodebytes reads
// (binascii.a2b_base64, not strict: characters outside the alphabet are skipped, padding ends the data, and
// the data characters must make whole bytes).
func pyBase64(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 { // value.encode('ascii') comes first
			return false
		}
	}
	quad, pads := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '=':
			if quad >= 2 {
				if pads++; quad+pads >= 4 {
					return true
				}
			}
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			quad, pads = (quad+1)%4, 0
		}
	}
	return quad == 0
}
