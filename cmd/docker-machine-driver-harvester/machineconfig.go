package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/rancher/machine/libmachine/mcnflag"
	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/harvester/autoscale"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// maxMachineConfigSize bounds what --machine-config reads. The API server stores an object of at most about
// 1.5 MiB (etcd's default request limit); kubectl's YAML of it, with metadata.managedFields, runs somewhat larger.
const maxMachineConfigSize = 3 << 20

// readMachineConfig reads --machine-config: a regular file of at most maxMachineConfigSize bytes, or for "-"
// that much of stdin. Nothing else is opened: a FIFO, device or directory is refused by what it is.
func readMachineConfig(path string, stdin io.Reader) ([]byte, error) {
	return readObjectFile("--machine-config", "a machine config", path, stdin)
}

// readObjectFile reads the file of flag holding one object (what names it in errors), bounded as
// readMachineConfig. A provisioning cluster (--cluster) is bounded the same: the API server stores neither
// above about 1.5 MiB.
func readObjectFile(flag, what, path string, stdin io.Reader) ([]byte, error) {
	if path != "-" {
		data, err := bounded.ReadRegularFile(path, maxMachineConfigSize)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read the file: %w", flag, err)
		}
		return data, nil
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxMachineConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s -: cannot read stdin: %w", flag, err)
	}
	if len(data) > maxMachineConfigSize {
		return nil, fmt.Errorf("%s -: stdin holds more than %s, more than %s can be", flag, bounded.FormatSize(maxMachineConfigSize), what)
	}
	return data, nil
}

// rancherCommand is what Rancher makes of a machine config: the driver's command line, and with --cluster the
// check line of what the pool's schema drops (nil without) and the pool's quantity (0 when unknown).
type rancherCommand struct {
	args     []string
	schema   *preflight.Check
	quantity int64
	// pool is the pool's nodes and its cluster's, for its autoscaling annotations; nil without a cluster.
	pool *autoscale.Pool
}

// machineCommand is what Rancher makes of the machine-config object in data — the YAML (or JSON) `kubectl get
// harvesterconfig NAME -o yaml` prints, of kind HarvesterConfig, or <Name>Config for the driver installed under a
// second name — in a pool of from (--cluster; nil for none). Its args are the driver's part of the command line
// Rancher gives rancher-machine: the fields become flags of id by Rancher's rules (internal/rancher ToArgs: a
// non-empty string as --<driver>-<field>=value, a true boolean as the bare flag; "", false and null give
// nothing); metadata is left out. With from, the fields the pool's copy of the schema lacks are dropped first, as
// Rancher drops them (pruneForPool), and for driver harvester the cluster's name is the one Rancher adds (toArgs),
// not the config's clusterName field. Everything wrong with the object is reported at once, each problem naming
// the field and never its value: a field this driver does not have, a value of the wrong type (Rancher's CRD types
// an int flag's field as a string), an int field that is no whole number.
func machineCommand(data []byte, id identity.Identity, from *poolSource) (rancherCommand, error) {
	var out rancherCommand
	fields, err := machineConfigFields()
	if err != nil {
		return out, err
	}
	obj, err := decodeMachineConfig(data, fields)
	if err != nil {
		return out, errors.New("--machine-config: " + config.Redact(err.Error()))
	}
	if err := checkConfigKind(obj, id); err != nil {
		return out, errors.New(config.Redact(err.Error()))
	}
	clusterName := ""
	if from != nil {
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		pool, cluster, err := from.poolOf(kind, name)
		if err != nil {
			return out, err
		}
		var schema preflight.Check
		obj, schema = pruneForPool(obj, pool, id)
		out.schema, clusterName = &schema, cluster
		if pool.Quantity != nil {
			out.quantity = *pool.Quantity
		}
		if from.cluster != nil {
			out.pool = &autoscale.Pool{Name: pool.Name, Nodes: pool.Nodes, Runs: from.cluster.Runs}
		}
	}
	spec := map[string]any{}
	var problems, unknown []string
	for _, name := range sortedKeys(obj) {
		v := obj[name]
		switch name {
		case "apiVersion", "kind", "metadata":
			continue
		}
		f, known := fields[name]
		if !known {
			unknown = append(unknown, name)
			continue
		}
		if why := f.wrongValue(v); why != "" {
			problems = append(problems, fmt.Sprintf("field %s (--%s) %s", name, id.Flag(f.flag.String()), why))
			continue
		}
		spec[name] = v
	}
	problems = append(problems, unknownFields(unknown, fields, rancher.ConfigKind(id.Name()), id)...)
	if len(problems) > 0 {
		return out, errors.New("--machine-config: " + config.Redact(strings.Join(problems, "; ")))
	}
	if clusterName == "" {
		clusterName, _ = spec["clusterName"].(string)
	}
	out.args = rancher.ToArgs(id.Name(), spec, clusterName, rancher.Since213)
	return out, nil
}

// decodeMachineConfig reads a machine config's YAML or JSON into an object, as sigs.k8s.io/yaml reads it, after
// refusing what a reader could take another way: a second document, a key given twice. A problem names a key only
// when it is a field (config.DuplicateKeys), and quotes nothing the YAML parser quotes (config.ParseErrorText).
func decodeMachineConfig(data []byte, fields map[string]configField) (map[string]any, error) {
	if err := config.OneDocument(data); err != nil {
		return nil, err
	}
	isField := func(key string) bool {
		_, ok := fields[key]
		return ok || key == "apiVersion" || key == "kind" || key == "metadata"
	}
	if dups := config.DuplicateKeys(data, isField); len(dups) > 0 {
		return nil, fmt.Errorf("field %s is given twice; a reader may take either value: give each field once", strings.Join(dups, ", field "))
	}
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, errors.New("not a YAML or JSON object: " + config.ParseErrorText(err))
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("not a YAML or JSON object; give the output of kubectl get harvesterconfig NAME -o yaml")
	}
	return obj, nil
}

// unknownFields are the problems of the keys of a machine config that are no field of kind. A key is named only
// when it says what it meant: a flag's name or its environment variable (under this driver's name or the
// canonical one, with or without its dashes), told with the field of that flag; or a typo of a field, at most two
// letters off, told with the field meant. Any other key may be a secret pasted by mistake, and is counted, not
// named.
func unknownFields(keys []string, fields map[string]configField, kind string, id identity.Identity) []string {
	var problems []string
	hidden := 0
	for _, key := range keys {
		if field, flag := flagOfKey(key, fields, id); field != "" {
			// Unquoted: it is a flag's name (a quoted one holding "password" would be redacted).
			problems = append(problems, fmt.Sprintf("field %s is the name of flag --%s, not a field of %s: its field is %s", key, flag, kind, field))
		} else if meant := nearestField(key, fields); meant != "" {
			problems = append(problems, fmt.Sprintf("field %q is not a field of %s: did you mean %s?", key, kind, meant))
		} else {
			hidden++
		}
	}
	const why = "a key that is no field's name may be a secret pasted by mistake; the fields are the flags' names in the flag table of docs/options.md"
	switch {
	case hidden == 1:
		problems = append(problems, fmt.Sprintf("a field that is not a field of %s (its name is not shown: %s)", kind, why))
	case hidden > 1:
		problems = append(problems, fmt.Sprintf("%d fields that are not fields of %s (their names are not shown: %s)", hidden, kind, why))
	}
	return problems
}

// flagOfKey is the field, and the flag under id's name, whose flag name (harvester-cpu-count, --harvester-cpu-count)
// or environment variable (HARVESTER_CPU_COUNT) key is, under id's name or the canonical one; "" for none. A flag's
// name is no secret: the message may name it.
func flagOfKey(key string, fields map[string]configField, id identity.Identity) (field, flag string) {
	bare := strings.TrimLeft(key, "-")
	for name, f := range fields {
		canonical := f.flag.String()
		if bare == canonical || bare == id.Flag(canonical) || key == config.EnvVar(canonical) || key == id.EnvVar(canonical) {
			return name, id.Flag(canonical)
		}
	}
	return "", ""
}

// nearestField is the field key is a typo of, at most two edits away ignoring case, or "".
func nearestField(key string, fields map[string]configField) string {
	best, bestDistance := "", 3
	for name := range fields {
		if d := editDistance(strings.ToLower(key), strings.ToLower(name)); d < bestDistance || (d == bestDistance && name < best) {
			best, bestDistance = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkConfigKind accepts a machine config of this driver under any of its names: apiVersion
// rke-machine-config.cattle.io/v1 and kind <Name>Config (rancher.ConfigKind) where <name> is harvester, this
// executable's name or the release's second name; all of them have this driver's fields. Other valid names are
// other drivers' (Amazonec2Config: a second name may hold digits).
func checkConfigKind(obj map[string]any, id identity.Identity) error {
	want := rancher.ConfigKind(id.Name())
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if kind == "List" || obj["items"] != nil {
		return fmt.Errorf("--machine-config: the file holds a list; save one machine config: kubectl get %s -n fleet-default NAME -o yaml",
			rancher.ConfigResource(id.Name()))
	}
	name, isConfig := strings.CutSuffix(kind, "Config")
	lower := strings.ToLower(name)
	validName := isConfig && name != "" && name == strings.ToUpper(lower[:1])+lower[1:] &&
		(lower == identity.Canonical || lower == id.Name() || lower == identity.Release)
	if apiVersion != rancher.ConfigGroup+"/v1" || !validName {
		return fmt.Errorf("--machine-config: the object must be apiVersion %s/v1, kind %s (kubectl get %s -n fleet-default NAME -o yaml); it is apiVersion %q, kind %q",
			rancher.ConfigGroup, want, rancher.ConfigResource(id.Name()), apiVersion, kind)
	}
	return nil
}

// configField is a field of the machine-config object and the flag it comes from.
type configField struct {
	rancher.Field
	flag mcnflag.Flag
}

// machineConfigFields are the fields Rancher makes of the driver's flags, by name (rancher.FieldOf).
func machineConfigFields() (map[string]configField, error) {
	out := map[string]configField{}
	for _, fl := range config.CreateFlags() {
		f, err := rancher.FieldOf(fl)
		if err != nil {
			return nil, err
		}
		out[f.Name] = configField{Field: f, flag: fl}
	}
	return out, nil
}

// wrongValue says what is wrong with v as the field's value, or "": the type the CRD gives the field (null is
// always allowed: the field unset), and for an int flag's string a whole number.
func (f configField) wrongValue(v any) string {
	if v == nil {
		return ""
	}
	switch f.Type {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "array[string]":
		list, ok := v.([]any)
		if !ok {
			return "must be a list of strings"
		}
		for _, e := range list {
			if _, ok := e.(string); !ok {
				return "must be a list of strings"
			}
		}
	default: // string, password
		s, ok := v.(string)
		if !ok {
			return "must be a string: quote the value (Rancher's CRD types every field of a string or int flag as a string)"
		}
		if _, isInt := f.flag.(*mcnflag.IntFlag); isInt && s != "" {
			if _, err := strconv.Atoi(s); err != nil {
				return "must be a whole number in quotes"
			}
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
