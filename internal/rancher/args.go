package rancher

import (
	"fmt"
	"sort"
)

// PruneBySchema drops from a machine-config object every key that is not a field of the pool's copy of the
// driver's schema (pkg/controllers/provisioningv2/provisioningcluster/template.go, pruneBySchema, called by
// toMachineTemplate): metadata, kind and apiVersion, and the fields a newer driver added after the pool was
// created (rancher/rancher#40730). The result is the spec of the pool's machine template and of its machines.
func PruneBySchema(config map[string]any, poolFields []Field) map[string]any {
	known := map[string]bool{}
	for _, f := range poolFields {
		known[f.Name] = true
	}
	spec := map[string]any{}
	for k, v := range config {
		if known[k] {
			spec[k] = v
		}
	}
	return spec
}

// ToArgs is the driver's part of the command line Rancher gives rancher-machine create for a machine of that
// spec (pkg/controllers/capr/machineprovision/args.go, toArgs): "--<driver>-<field>=<value>" for each
// non-empty string and each number (a JSON float64), the bare flag for each true boolean, one flag per string
// of an array; nothing for "", false, null, maps (the "common" field) or providerID; for driver harvester
// "--harvester-cluster-name=<cluster>" added whatever the spec holds; sorted. (toArgs's amazonec2 rules are
// left out.)
func ToArgs(driver string, spec map[string]any, clusterName string, r Rule) []string {
	var cmd []string
	for k, v := range spec {
		if k == "providerID" || v == nil {
			continue
		}
		flag := r.Flag(driver, k)
		switch v := v.(type) {
		case float64:
			cmd = append(cmd, fmt.Sprintf("%s=%v", flag, v))
		case string:
			if v != "" {
				cmd = append(cmd, flag+"="+v)
			}
		case bool:
			if v {
				cmd = append(cmd, flag)
			}
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					cmd = append(cmd, flag+"="+s)
				}
			}
		}
	}
	if driver == "harvester" {
		cmd = append(cmd, "--harvester-cluster-name="+clusterName)
	}
	sort.Strings(cmd)
	return cmd
}

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
