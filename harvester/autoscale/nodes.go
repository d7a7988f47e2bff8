package autoscale

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// labelWorker is the label Rancher gives the node of a worker machine (rancher/rancher
// pkg/controllers/managementuser/machinerole/machinerole.go WorkerLabelSync; v2.13.0 to v2.15.0).
const labelWorker = "node-role.kubernetes.io/worker"

// labels are the labels the node is known to carry before it exists, in the autoscaler's form "k1=v1,k2=v2"
// (clusterapi_unstructured.go Labels: split on "," then on the first "="):
//
//   - the pool's labels, which Rancher's planner gives the kubelet (node-label);
//   - node-role.kubernetes.io/worker=true for a worker pool;
//   - the zone and region, when the guest cluster runs Harvester's cloud provider and the VM can run in one zone
//     (region) only: the cloud provider labels the node with the zone and region Harvester copied onto the VMI
//     from its host (harvester/harvester-cloud-provider pkg/cloud-controller-manager/instance.go InstanceMetadata;
//     k8s.io/cloud-provider controllers/node/node_controller.go sets the topology.kubernetes.io/ and the
//     failure-domain.beta.kubernetes.io/ labels).
//
// The autoscaler adds kubernetes.io/os, kubernetes.io/arch and kubernetes.io/hostname itself (clusterapi_nodegroup.go
// buildGenericLabels). A label the pool gives that is not a valid label is left out: the kubelet refuses it.
func labels(vm *kubevirtv1.VirtualMachine, in Inputs) (*Annotation, *Omitted) {
	out := map[string]string{}
	var how, bad []string
	if in.Pool != nil {
		for k, v := range in.Pool.Nodes.Labels {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				bad = append(bad, k)
				continue
			}
			out[k] = v
		}
		if len(in.Pool.Nodes.Labels) > len(bad) {
			how = append(how, "pool "+in.Pool.Name+"'s labels")
		}
		if in.Pool.Nodes.WorkerRole {
			out[labelWorker] = "true"
			how = append(how, "the worker role's label Rancher sets")
		}
	}
	var topologyWhy string
	for _, t := range []struct{ key, beta, what string }{
		{corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone, "zone"},
		{corev1.LabelTopologyRegion, corev1.LabelFailureDomainBetaRegion, "region"},
	} {
		value, pinned := pinnedTo(vm, t.key)
		if !pinned {
			continue
		}
		switch in.CloudProvider {
		case CloudProviderHarvester:
			out[t.key], out[t.beta] = value, value
			how = append(how, fmt.Sprintf("the %s %s the VM is held to, with which Harvester's cloud provider labels the node", t.what, value))
		case CloudProviderOther:
			topologyWhy = "the guest cluster does not run Harvester's cloud provider, which alone labels a node with its host's zone and region"
		default:
			topologyWhy = "the VM is held to one zone or region, but whether the guest cluster runs Harvester's cloud provider, which labels the node with it, is not known: give check --cluster"
		}
	}
	var why []string
	if len(bad) > 0 {
		sort.Strings(bad)
		why = append(why, fmt.Sprintf("pool %s's labels %s left out: not valid node labels, which the kubelet refuses", in.Pool.Name, strings.Join(bad, ", ")))
	}
	if topologyWhy != "" {
		why = append(why, "no zone or region labels: "+topologyWhy)
	}
	if in.Pool == nil {
		why = append(why, "the pool's labels are not known: give check --cluster")
	}
	var omitted *Omitted
	if len(why) > 0 {
		omitted = &Omitted{Key: KeyLabels, Why: strings.Join(why, "; ")}
	}
	if len(out) == 0 {
		return nil, omitted
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + out[k]
	}
	return &Annotation{Key: KeyLabels, Value: strings.Join(pairs, ","), How: strings.Join(how, "; ")}, omitted
}

// pinnedTo is the one value of the node label key the VM's host must have: the VMI's nodeSelector's, or the one
// value every term of its required node affinity allows (terms are ORed, the expressions of a term ANDed; a
// term that does not restrict key allows any).
func pinnedTo(vm *kubevirtv1.VirtualMachine, key string) (string, bool) {
	spec := vm.Spec.Template.Spec
	if v, ok := spec.NodeSelector[key]; ok {
		return v, true
	}
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", false
	}
	var union []string
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		var allowed []string
		restricted := false
		for _, e := range term.MatchExpressions {
			if e.Key != key || e.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			if !restricted {
				allowed, restricted = slices.Clone(e.Values), true
				continue
			}
			allowed = slices.DeleteFunc(allowed, func(v string) bool { return !slices.Contains(e.Values, v) })
		}
		if !restricted {
			return "", false
		}
		for _, v := range allowed {
			if !slices.Contains(union, v) {
				union = append(union, v)
			}
		}
	}
	if len(union) != 1 {
		return "", false
	}
	return union[0], true
}

// taintEffects are the effects a taint can have (corev1.TaintEffect).
var taintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// taints are the taints the node gets, in the autoscaler's form "k1=v1:Effect,k2:Effect"
// (clusterapi_unstructured.go Taints and parseTaint): the pool's, then those Rancher's planner gives a machine
// without the worker role (pkg/capr/planner/planner.go getTaints: etcd's NoExecute, unless a K3s machine is also
// control plane; the control plane's NoSchedule). A pool's taint that is not a valid taint is left out.
func taints(in Inputs) (*Annotation, *Omitted) {
	if in.Pool == nil {
		return nil, &Omitted{Key: KeyTaints, Why: "the pool's taints are not known: give check --cluster"}
	}
	n := in.Pool.Nodes
	all := slices.Clone(n.Taints)
	how := "pool " + in.Pool.Name + "'s taints"
	if !n.WorkerRole && (n.EtcdRole || n.ControlPlaneRole) {
		how += ", and those Rancher's planner gives a machine of its roles without the worker role"
		if n.EtcdRole && (!in.Pool.Runs.K3s || !n.ControlPlaneRole) {
			all = append(all, rancher.Taint{Key: "node-role.kubernetes.io/etcd", Effect: string(corev1.TaintEffectNoExecute)})
		}
		if n.ControlPlaneRole {
			all = append(all, rancher.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: string(corev1.TaintEffectNoSchedule)})
		}
	}
	var out, bad []string
	for _, t := range all {
		if len(validation.IsQualifiedName(t.Key)) > 0 || len(validation.IsValidLabelValue(t.Value)) > 0 || !slices.Contains(taintEffects, t.Effect) {
			bad = append(bad, t.Key)
			continue
		}
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+t.Effect)
	}
	var omitted *Omitted
	if len(bad) > 0 {
		omitted = &Omitted{Key: KeyTaints, Why: fmt.Sprintf("pool %s's taints %s left out: not valid taints (a key, a label value, an effect NoSchedule, PreferNoSchedule or NoExecute)", in.Pool.Name, strings.Join(bad, ", "))}
	}
	if len(out) == 0 {
		return nil, omitted
	}
	return &Annotation{Key: KeyTaints, Value: strings.Join(out, ","), How: how}, omitted
}
