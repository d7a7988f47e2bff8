package autoscale

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"
)

// Snippet is the pool's machineDeploymentAnnotations as YAML to paste into the pool's entry of the provisioning
// cluster (spec.rkeConfig.machinePools[]): a header saying what it is for, the annotations the pool already has
// but the capacity ones (in.Pool), then the computed ones, each under a comment saying how it was computed (and
// what the pool has in its place, when that differs), then a comment for each annotation left out and why.
// Rancher sets the autoscaler's min and max size itself, from the pool's autoscalingMinSize and
// autoscalingMaxSize (template.go machineDeployments): those of the pool's annotations are kept as they are.
func (r Result) Snippet(in Inputs) []byte {
	var b bytes.Buffer
	var current map[string]string
	switch {
	case in.Pool == nil:
		comment(&b, "", "The machineDeploymentAnnotations a pool of this node template needs to autoscale from zero machines (docs/autoscaling.md); the pool's labels and taints come with check --cluster and --pool:")
	case in.Pool.Nodes.Autoscales():
		current = in.Pool.Nodes.MachineDeploymentAnnotations
		comment(&b, "", "Pool %s autoscales (autoscalingMinSize %d, autoscalingMaxSize %d): put this in place of its machineDeploymentAnnotations (docs/autoscaling.md):",
			in.Pool.Name, *in.Pool.Nodes.AutoscalingMinSize, *in.Pool.Nodes.AutoscalingMaxSize)
	default:
		current = in.Pool.Nodes.MachineDeploymentAnnotations
		comment(&b, "", "Pool %s does not autoscale (it has no autoscalingMinSize and autoscalingMaxSize) and needs none of these; were it to autoscale, its machineDeploymentAnnotations would be (docs/autoscaling.md):", in.Pool.Name)
	}
	b.WriteString("machineDeploymentAnnotations:\n")
	// The pool's own annotations stay: all but those computed here, a capacity one the pool gives and this does
	// not compute (maxPods, dra-driver) with a comment that says so.
	var kept []string
	for k := range current {
		if r.Value(k) == "" {
			kept = append(kept, k)
		}
	}
	sort.Strings(kept)
	for _, k := range kept {
		if strings.HasPrefix(k, Prefix) {
			comment(&b, "  ", "as the pool has it: not computed here")
		}
		entry(&b, k, current[k])
	}
	for _, a := range r.Annotations {
		how := a.How
		if v, ok := current[a.Key]; ok && v != a.Value {
			how += fmt.Sprintf(" (the pool has %q)", v)
		}
		comment(&b, "  ", "%s", how)
		entry(&b, a.Key, a.Value)
	}
	for _, o := range r.Omitted {
		if _, given := current[o.Key]; given {
			continue
		}
		comment(&b, "  ", "not given: %s: %s", strings.TrimPrefix(o.Key, Prefix), o.Why)
	}
	return b.Bytes()
}

// entry writes one annotation, key and value quoted as YAML needs (a pool's own annotations may hold anything).
func entry(b *bytes.Buffer, key, value string) {
	out, _ := yaml.Marshal(map[string]string{key: value}) // a map of strings always marshals
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
}

// comment writes the text of format and args as one YAML comment line; a control character (a newline in a
// pool's name) becomes a space, so that nothing of it leaves the comment.
func comment(b *bytes.Buffer, indent, format string, args ...any) {
	text := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, fmt.Sprintf(format, args...))
	b.WriteString(indent + "# " + text + "\n")
}
