package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// rawJSON holds one list element until it is decoded on its own, so an error can name its index.
type rawJSON json.RawMessage

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// decode decodes the element into v, leniently like the reference driver (unknown keys are ignored).
func (r rawJSON) decode(v any) error {
	return DescribeJSONError(json.Unmarshal(r, v))
}

// decodeEntries reads a JSON-object flag value that lists entries under key ({"disks":[…]}): raw is decoded into
// doc, then each entry of the list (as list returns it) on its own into an E, so a problem names the entry's
// index; build turns entry i into a T. Problems are recorded under flag; entries that do not decode are left
// out, and an unusable document or an empty list gives nil.
func decodeEntries[E, T any](p *Problems, flag, raw, example string, doc any, key, noun string, list func() []rawJSON, build func(int, E) T) []T {
	if err := decodeJSONObject(raw, doc); err != nil {
		p.Addf(flag, "%v; want %s", err, example)
		return nil
	}
	items := list()
	if len(items) == 0 {
		p.Addf(flag, "%s must list at least one %s", key, noun)
		return nil
	}
	out := make([]T, 0, len(items))
	for i, item := range items {
		var e E
		if err := item.decode(&e); err != nil {
			p.Addf(flag, "%s[%d]: %v", key, i, err)
			continue
		}
		out = append(out, build(i, e))
	}
	return out
}

// decodeJSONObject decodes a JSON-object flag value into v. The object may be given as JSON or as base64 of
// JSON (userdata.DecodeBase64OrPlain decides which, by whether the decoding is a JSON object).
func decodeJSONObject(value string, v any) error {
	data, _ := userdata.DecodeBase64OrPlain(value, looksLikeJSONObject)
	return DescribeJSONError(json.Unmarshal(data, v))
}

func looksLikeJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// readJSONDocument returns the JSON document a flag value stands for, of at most limit bytes: the value itself
// when it is JSON (it starts with '{' or '['), its decoding when it is base64 of a document valid accepts (see
// userdata.DecodeBase64OrPlain), else the content of the file it names, read with bounded.ReadRegularFile
// (regular files only, without blocking, at most limit bytes). A value can be told apart this way since JSON
// starts with a character outside the base64 alphabet, and a path of a file holding JSON does not decode into
// JSON. An error never quotes the value or the file, which may hold a secret.
func readJSONDocument(value string, limit int64, valid func([]byte) bool) ([]byte, error) {
	data, wasBase64 := userdata.DecodeBase64OrPlain(value, valid)
	if trimmed := strings.TrimSpace(value); !wasBase64 && !strings.HasPrefix(trimmed, "{") && !strings.HasPrefix(trimmed, "[") {
		var err error
		if data, err = bounded.ReadRegularFile(value, limit); err != nil {
			return nil, fmt.Errorf("is neither JSON nor base64 of JSON, and cannot be read as a file path: %w (the value is not shown: it may hold a secret)", err)
		}
		var syntax *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(any)), &syntax) {
			return nil, fmt.Errorf("names a file that is not valid JSON (at byte %d; its content is not shown: it may hold a secret)", syntax.Offset)
		}
	}
	if int64(len(data)) > limit {
		return nil, &bounded.SizeError{Verb: "is", Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// decodeStrict decodes data into v and rejects unknown fields, so a misspelt key is an error instead of a
// silently ignored setting.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return DescribeJSONError(err)
	}
	if dec.More() {
		return errors.New("is not valid JSON: unexpected data after the object")
	}
	return nil
}

// DescribeJSONError rewords an error of encoding/json for a reader who typed the value into a form: where a syntax
// error is (and the character at fault), which field must be of which kind (and which kind it got).
func DescribeJSONError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		return fmt.Errorf("is not valid JSON (at byte %d: %v)", syntax.Offset, syntax)
	case errors.As(err, &typ):
		msg := fmt.Sprintf("must be %s, got %s", jsonKind(typ.Type.Kind().String()), typ.Value)
		if typ.Field == "" {
			return errors.New(msg)
		}
		return fmt.Errorf("%s %s", typ.Field, msg)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("has an unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return fmt.Errorf("is not valid JSON: %v", err)
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "a JSON object"
	case "slice", "array":
		return "a JSON list"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a JSON string"
	}
	return goKind
}

// flexInt is a whole number given as a JSON number or as a numeric string ("40"): forms and templates produce
// both.
type flexInt int

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if unquoted, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unquoted)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		// encoding/json names the field in errors of this type (decodeState.addErrorContext).
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[int]()}
	}
	*n = flexInt(v)
	return nil
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
