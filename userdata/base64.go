package userdata

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// DecodeBase64OrPlain returns the bytes a base64-or-plain flag value stands for.
//
// Rancher's UI sends user data, network data and affinity base64-encoded, while docker-machine users type them
// literally; the flags accept both. The old driver decoded any value that happened to be valid base64, which
// mangled literal values made only of base64 characters. The rule here is deliberate:
//
//   - The value is taken as base64 only if every character is in the standard or URL-safe base64 alphabet
//     (line breaks and spaces between groups are allowed), it decodes, the result is UTF-8 text, and that text
//     passes valid — the check for the format the flag expects (a cloud-config, a JSON object, a kubeconfig).
//   - Otherwise the value is taken literally.
//
// Every format these flags carry needs a character outside the base64 alphabet (`#` opens a cloud-config or a
// script, `{` a JSON object, `:` every YAML mapping), so a literal value can never be mistaken for base64, and a
// base64 value that decodes to something of the wrong format is reported against its literal form by the
// caller's validation instead of being silently decoded into garbage.
//
// Padding is optional: rancher/machine's GetDriverOpts cuts `--flag=value` at the second '=', which strips the
// padding of a base64 value passed that way.
func DecodeBase64OrPlain(value string, valid func([]byte) bool) (data []byte, wasBase64 bool) {
	if decoded, ok := decodeBase64(value); ok && utf8.Valid(decoded) && (valid == nil || valid(decoded)) {
		return decoded, true
	}
	return []byte(value), false
}

// decodeBase64 decodes s if it is entirely base64 (standard or URL-safe, padded or not, white space ignored).
func decodeBase64(s string) ([]byte, bool) {
	compact := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if compact == "" {
		return nil, false
	}
	urlSafe := false
	for _, r := range compact {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '/', r == '=':
		case r == '-' || r == '_':
			urlSafe = true
		default:
			return nil, false
		}
	}
	compact = strings.TrimRight(compact, "=")
	enc := base64.RawStdEncoding
	if urlSafe {
		enc = base64.RawURLEncoding
	}
	decoded, err := enc.DecodeString(compact)
	if err != nil {
		return nil, false
	}
	return decoded, true
}
