package rancher

import (
	"fmt"
	"sort"
)

// ToArgs is the driver's part of the command line Rancher gives rancher-machine create for a machine of that
// spec (pkg/controllers/capr/machineprovision/args.go, toArgs): "--<driver>-<field>=<value>" for each
// non-empty string and each number (a JSON float64), the bare flag for each true boolean, one flag per string
// of an array; nothing for "", false, null, maps (the "common" field) or providerID; for driver harvester
// "--harvester-cluster-name=<cluster>" added whatever the spec holds; sorted. (toArgs's amazonec2 rules are
// left out.)
func ToArgs(driver string, spec map[string]any, clusterName string, r Rule) []string {
	var cmd []string
	for k, v := range spec {
		if k == "providerID" {
			continue
		}
		cmd = append(cmd, fieldArgs(r.Flag(driver, k), v)...)
	}
	if driver == "harvester" {
		cmd = append(cmd, "--harvester-cluster-name="+clusterName)
	}
	sort.Strings(cmd)
	return cmd
}

// fieldArgs is what toArgs passes for one field's value v as flag: the flag with the number, the flag with a
// non-empty string, the bare flag for true, the flag once per string of a list; nothing for "", false, null, a
// map or a list without strings.
func fieldArgs(flag string, v any) []string {
	switch v := v.(type) {
	case float64:
		return []string{fmt.Sprintf("%s=%v", flag, v)}
	case string:
		if v != "" {
			return []string{flag + "=" + v}
		}
	case bool:
		if v {
			return []string{flag}
		}
	case []any:
		var out []string
		for _, s := range v {
			if s, ok := s.(string); ok {
				out = append(out, flag+"="+s)
			}
		}
		return out
	}
	return nil
}

// Passes reports whether toArgs passes anything for a field holding v: whether dropping the field changes the
// driver's command line.
func Passes(v any) bool { return len(fieldArgs("", v)) > 0 }

// HashedSpec is what a machine template's spec contributes to its hash, the machine-template-hash label whose
// change replaces every machine of the pool (template.go, createMachineTemplateHash): the spec without
// "common", and without nil values, empty strings and empty arrays (pkg/capr/planner/planner.go, PruneEmpty).
// A false boolean stays: it counts.
func HashedSpec(spec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		if k == "common" || v == nil {
			continue
		}
		switch t := v.(type) {
		case string:
			if t == "" {
				continue
			}
		case []any:
			if len(t) == 0 {
				continue
			}
		case []string:
			if len(t) == 0 {
				continue
			}
		}
		out[k] = v
	}
	return out
}
