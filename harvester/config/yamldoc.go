package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	yaml2 "go.yaml.in/yaml/v2"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// Documents someone else wrote (a kubeconfig given as content, a machine config) are read with the YAML parser
// client-go and sigs.k8s.io/yaml read them with, go.yaml.in/yaml/v2 (YAML 1.1; JSON is YAML to it), so what the
// driver checks is what they read. Two things sigs.k8s.io/yaml passes silently a reader could take another way:
// documents after the first (it reads the first) and a key given twice (it keeps the last).

// OneDocument refuses data holding more than one YAML document: a document after the first that holds anything,
// or that does not parse. A first document that does not parse is left to the reader's own parse to report.
func OneDocument(data []byte) error {
	d := yaml2.NewDecoder(bytes.NewReader(data))
	for n := 0; ; n++ {
		var doc any
		err := d.Decode(&doc)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && n == 0:
			return nil
		case err != nil:
			return fmt.Errorf("does not parse after its first document (%s): give one document", ParseErrorText(err))
		case n > 0 && doc != nil:
			return errors.New("holds more than one YAML document; only the first would be read: give one document")
		}
	}
}

// notShown stands for a key that is not a field name: one pasted by mistake may be a secret.
const notShown = "(a key not shown)"

// DuplicateKeys lists the keys data's YAML or JSON gives twice in one mapping, each as its path from the top
// (users[0].user.token), in the order found. A key known(key) says is a field name is shown; any other, which
// may be a secret pasted by mistake, is not. A YAML merge key (<<) is not a repetition: the keys it merges give
// way to the mapping's own, as YAML says. Data that does not parse has none.
func DuplicateKeys(data []byte, known func(string) bool) []string {
	var top yaml2.MapSlice // mappings nested in a MapSlice decode as MapSlices too, repeated keys kept
	if yaml2.Unmarshal(data, &top) != nil {
		return nil
	}
	var dups []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case yaml2.MapSlice:
			seen := map[string]bool{}
			for _, item := range v {
				key, _ := item.Key.(string)
				if !known(key) {
					key = notShown
				}
				p := key
				if path != "" {
					p = path + "." + key
				}
				// Keys compare as their JSON names: sigs.k8s.io/yaml writes 1 and "1" alike. A key that is a
				// list or a mapping has none (sigs.k8s.io/yaml refuses it); fmt's text stands in for it.
				name := fmt.Sprint(item.Key)
				if seen[name] {
					dups = append(dups, p)
				}
				seen[name] = true
				walk(item.Value, p)
			}
		case []any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(top, "")
	return dups
}

// kubeconfigKeys are the keys of a kubeconfig: the JSON names of clientcmd/api/v1's fields, gathered the first
// time a kubeconfig given as content is read (not at every start of the plugin).
var kubeconfigKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				keys[name] = true
			}
			add(f.Type)
		}
	}
	add(reflect.TypeOf(clientcmdv1.Config{}))
	return keys
})

// isKubeconfigKey reports whether key is a kubeconfig field's name.
func isKubeconfigKey(key string) bool { return kubeconfigKeys()[key] }
