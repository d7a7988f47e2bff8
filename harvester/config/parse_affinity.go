package config

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

var (
	nodeSelectorOperators = []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt,
	}
	labelSelectorOperators = []metav1.LabelSelectorOperator{
		metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
	}
)

// parseAffinity reads --harvester-vm-affinity: a corev1.Affinity as JSON or base64 of JSON. Unknown fields are
// rejected (a misspelt "nodeAfinity" would otherwise silently unpin the VM from its zone) and the selectors are
// checked the way the API server would, so a bad affinity fails here and not at VM creation.
func parseAffinity(p *Problems, raw string) *corev1.Affinity {
	if raw == "" {
		return nil
	}
	data, _ := userdata.DecodeBase64OrPlain(raw, looksLikeJSONObject)
	var aff corev1.Affinity
	if err := decodeStrict(data, &aff); err != nil {
		p.Addf(FlagVMAffinity, "%v; want a Kubernetes Affinity object, e.g. %s", err,
			`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a"]}]}]}}}`)
		return nil
	}
	var errs []string
	addf := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if na := aff.NodeAffinity; na != nil {
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			if len(req.NodeSelectorTerms) == 0 {
				addf("nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms must not be empty")
			}
			for i, term := range req.NodeSelectorTerms {
				checkNodeSelectorTerm(addf, fmt.Sprintf("nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", i), term)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			path := fmt.Sprintf("nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]", i)
			checkWeight(addf, path, pref.Weight)
			checkNodeSelectorTerm(addf, path+".preference", pref.Preference)
		}
	}
	if pa := aff.PodAffinity; pa != nil {
		checkPodAffinityTerms(addf, "podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := aff.PodAntiAffinity; pa != nil {
		checkPodAffinityTerms(addf, "podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	for _, e := range errs {
		p.Addf(FlagVMAffinity, "%s", e)
	}
	if len(errs) > 0 {
		return nil
	}
	return &aff
}

type addfFunc func(format string, args ...any)

func checkNodeSelectorTerm(addf addfFunc, path string, term corev1.NodeSelectorTerm) {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		addf("%s must have matchExpressions or matchFields", path)
	}
	for i, req := range term.MatchExpressions {
		checkNodeSelectorRequirement(addf, fmt.Sprintf("%s.matchExpressions[%d]", path, i), req, true)
	}
	for i, req := range term.MatchFields {
		checkNodeSelectorRequirement(addf, fmt.Sprintf("%s.matchFields[%d]", path, i), req, false)
	}
}

func checkNodeSelectorRequirement(addf addfFunc, path string, req corev1.NodeSelectorRequirement, labelKey bool) {
	if labelKey {
		if msgs := validation.IsQualifiedName(req.Key); len(msgs) > 0 {
			addf("%s.key %q is not a valid label key: %s", path, req.Key, msgs[0])
		}
	} else if req.Key != "metadata.name" {
		addf("%s.key must be metadata.name (the only node field selectors support), got %q", path, req.Key)
	}
	if !slices.Contains(nodeSelectorOperators, req.Operator) {
		addf("%s.operator must be one of %s, got %q", path, lists.Or(nodeSelectorOperators), req.Operator)
		return
	}
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) == 0 {
			addf("%s.values must not be empty for operator %s", path, req.Operator)
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			addf("%s.values must be empty for operator %s", path, req.Operator)
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(req.Values) != 1 {
			addf("%s.values must hold exactly one integer for operator %s", path, req.Operator)
		}
	}
}

func checkPodAffinityTerms(addf addfFunc, path string, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
	for i, term := range required {
		checkPodAffinityTerm(addf, fmt.Sprintf("%s.requiredDuringSchedulingIgnoredDuringExecution[%d]", path, i), term)
	}
	for i, w := range preferred {
		p := fmt.Sprintf("%s.preferredDuringSchedulingIgnoredDuringExecution[%d]", path, i)
		checkWeight(addf, p, w.Weight)
		checkPodAffinityTerm(addf, p+".podAffinityTerm", w.PodAffinityTerm)
	}
}

func checkPodAffinityTerm(addf addfFunc, path string, term corev1.PodAffinityTerm) {
	if term.TopologyKey == "" {
		addf("%s.topologyKey is required, e.g. kubernetes.io/hostname", path)
	} else if msgs := validation.IsQualifiedName(term.TopologyKey); len(msgs) > 0 {
		addf("%s.topologyKey %q is not a valid label key: %s", path, term.TopologyKey, msgs[0])
	}
	for _, sel := range []struct {
		name string
		sel  *metav1.LabelSelector
	}{{"labelSelector", term.LabelSelector}, {"namespaceSelector", term.NamespaceSelector}} {
		if sel.sel == nil {
			continue
		}
		for i, req := range sel.sel.MatchExpressions {
			rp := fmt.Sprintf("%s.%s.matchExpressions[%d]", path, sel.name, i)
			if !slices.Contains(labelSelectorOperators, req.Operator) {
				addf("%s.operator must be one of %s, got %q", rp, lists.Or(labelSelectorOperators), req.Operator)
				continue
			}
			hasValues := len(req.Values) > 0
			needsValues := req.Operator == metav1.LabelSelectorOpIn || req.Operator == metav1.LabelSelectorOpNotIn
			if hasValues != needsValues {
				if needsValues {
					addf("%s.values must not be empty for operator %s", rp, req.Operator)
				} else {
					addf("%s.values must be empty for operator %s", rp, req.Operator)
				}
			}
		}
	}
}

func checkWeight(addf addfFunc, path string, w int32) {
	if w < 1 || w > 100 {
		addf("%s.weight must be between 1 and 100, got %d", path, w)
	}
}

// parseTopologyList reads a comma-separated list of zone or region names (label values).
func parseTopologyList(p *Problems, flag, raw string) []string {
	var out []string
	for _, v := range strings.Split(raw, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			p.Addf(flag, "%q is not a valid zone or region name (a label value: letters, digits, '-', '_', '.'; at most 63)", v)
			continue
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
