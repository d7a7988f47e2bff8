package standin

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// placement is what kube-scheduler's filters look at: a pod's nodeSelector, required node affinity and device
// resource requests.
type placement struct {
	key          string // namespace/name: a hash of it picks among the nodes that fit, so placement is stable
	nodeSelector map[string]string
	affinity     *corev1.Affinity
	want         map[string]int64                   // device resource requests by name
	held         func(node string) map[string]int64 // what others placed on a node hold of them
}

// pickNode returns a node that satisfies p's nodeSelector and required node affinity and has its devices free,
// chosen by a hash of p.key among those that fit, or "" and kube-scheduler's message. The launcher pod requests
// one of a device's resource per entry (KubeVirt pkg/virt-controller/services/rendergpus.go, renderresources.go),
// counted against the node's allocatable as kube-scheduler's NodeResourcesFit does. Preferred terms, pod
// (anti-)affinity, taints, CPU and memory are not modelled.
func (s *StandIn) pickNode(p placement) (string, string) {
	nodes, _ := s.nodes.List(labels.Everything())
	if len(nodes) == 0 {
		return "", "no nodes available to schedule pods"
	}
	var fit []string
	unmatched, short := 0, map[string]int{}
	for _, n := range nodes {
		switch {
		case !nodeMatches(n, p.nodeSelector, p.affinity):
			unmatched++
		case devicesShort(p, n) != "":
			short[devicesShort(p, n)]++
		default:
			fit = append(fit, n.Name)
		}
	}
	if len(fit) == 0 {
		n := len(nodes)
		if len(short) == 0 {
			return "", fmt.Sprintf("0/%d nodes are available: %d node(s) didn't match Pod's node affinity/selector. "+
				"preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", n, n, n, n)
		}
		var reasons []string
		if unmatched > 0 {
			reasons = append(reasons, fmt.Sprintf("%d node(s) didn't match Pod's node affinity/selector", unmatched))
		}
		for res, count := range short {
			reasons = append(reasons, fmt.Sprintf("%d Insufficient %s", count, res))
		}
		sort.Strings(reasons)
		return "", fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.",
			n, strings.Join(reasons, ", "), n, n)
	}
	sort.Strings(fit)
	return fit[hash(p.key)%uint32(len(fit))], ""
}

// devicesShort names a device resource p asks for of which node has too few free, or "".
func devicesShort(p placement, node *corev1.Node) string {
	if len(p.want) == 0 {
		return ""
	}
	held := p.held(node.Name)
	names := make([]string, 0, len(p.want))
	for res := range p.want {
		names = append(names, res)
	}
	sort.Strings(names)
	for _, res := range names {
		alloc := node.Status.Allocatable[corev1.ResourceName(res)]
		if alloc.Value()-held[res] < p.want[res] {
			return res
		}
	}
	return ""
}

func (s *StandIn) nodeCount() int {
	nodes, _ := s.nodes.List(labels.Everything())
	return len(nodes)
}

// insufficientMemory is kube-scheduler's message when no node has the memory the launcher pod requests.
func insufficientMemory(n int) string {
	return fmt.Sprintf("0/%d nodes are available: %d Insufficient memory. "+
		"preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.", n, n, n, n)
}

// copyTopology is Harvester's VMI controller (ReconcileFromHostLabels): for VMIs created by the node driver it
// copies the host's zone, region and hostname labels into VMI annotations, where the guest cluster's cloud
// provider reads them (harvester/harvester pkg/controller/master/virtualmachine/vmi_controller.go;
// harvester/cloud-provider-harvester pkg/cloud-controller-manager/instance.go).
func (s *StandIn) copyTopology(vmi *kubevirtv1.VirtualMachineInstance, nodeName string) {
	node, err := s.nodes.Get(nodeName)
	if err != nil {
		return
	}
	for _, k := range []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelHostname} {
		v, ok := node.Labels[k]
		if !ok {
			continue
		}
		if vmi.Annotations == nil {
			vmi.Annotations = map[string]string{}
		}
		vmi.Annotations[k] = v
	}
}

// nodeMatches applies a nodeSelector and the required terms of a node affinity (terms ORed, expressions ANDed;
// an empty term matches nothing), as kube-scheduler's NodeAffinity plugin does.
func nodeMatches(node *corev1.Node, nodeSelector map[string]string, aff *corev1.Affinity) bool {
	if !labels.SelectorFromSet(nodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(node, term) {
			return true
		}
	}
	return false
}

func termMatches(node *corev1.Node, term corev1.NodeSelectorTerm) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	fields := labels.Set{"metadata.name": node.Name}
	for _, set := range []struct {
		reqs   []corev1.NodeSelectorRequirement
		values labels.Set
	}{{term.MatchExpressions, labels.Set(node.Labels)}, {term.MatchFields, fields}} {
		for _, r := range set.reqs {
			req, err := labels.NewRequirement(r.Key, operators[r.Operator], r.Values)
			if err != nil || !req.Matches(set.values) {
				return false
			}
		}
	}
	return true
}

var operators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}
