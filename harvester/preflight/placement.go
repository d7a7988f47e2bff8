package preflight

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// checkNetworks makes sure the network (a NetworkAttachmentDefinition) of every bridge of the VM exists, and
// checks the VM's NICs on Kube-OVN overlay networks (checkOverlays, overlay.go), which are what it finds
// (found.overlays).
func checkNetworks(ctx context.Context, r *run) {
	var overlays []overlayNIC
	for _, n := range vmNetworks(r.in.Machine) {
		if n.bad != "" {
			r.p.Addf(n.flag, "%s", n.bad)
			continue
		}
		nad, err := kube.GetCached(ctx, r.c, kube.Networks, n.network.Namespace, n.network.Name)
		switch {
		case err == nil:
			if o, ok := overlayOf(r, n, nad); ok {
				overlays = append(overlays, o)
			}
		case kube.IsMissing(err, n.network.Name):
			r.p.Addf(n.flag, "%s: network %s does not exist in Harvester (Networks → VM Networks)", n.nic, n.network)
		case apierrors.IsForbidden(err):
			r.u.addf("the credential may not get network-attachment-definitions in namespace %s: cannot tell whether network %s exists",
				n.network.Namespace, n.network)
		default:
			r.p.Addf(n.flag, "%v", r.c.Explain("read network", n.network.String(), err))
		}
	}
	checkOverlays(ctx, r, overlays)
	r.found.overlays = overlays
}

// hostRule is what the VM requires of a host to run there: its template's nodeSelector and required node
// affinity, which KubeVirt copies onto the virt-launcher pod (kubevirt/kubevirt
// pkg/virt-controller/services/template.go, renderLaunchManifest), judged with the scheduler's own matcher
// (k8s.io/component-helpers scheduling/corev1/nodeaffinity). It is the VM's, --harvester-vm-patch applied: a
// patch may pin the VM elsewhere than --harvester-zone says, or add a nodeSelector no host carries.
type hostRule struct {
	match nodeaffinity.RequiredNodeAffinity
	set   bool   // the VM requires something of a host
	flag  string // the flag that made the requirement: --harvester-zone or --harvester-region when only they did
	// zonesOnly: the requirement is the one --harvester-zone and --harvester-region make alone (no
	// --harvester-vm-affinity term, no patch): its problems are said in zones and regions.
	zonesOnly bool
}

func hostRuleOf(m *objects.Machine) hostRule {
	cfg, spec := m.Config(), m.VM.Spec.Template.Spec
	var required *corev1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	rule := hostRule{
		match: nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: corev1.PodSpec{NodeSelector: spec.NodeSelector, Affinity: spec.Affinity}}),
		set:   len(spec.NodeSelector) > 0 || required != nil && len(required.NodeSelectorTerms) > 0,
		flag:  config.FlagVMPatch,
	}
	if len(spec.NodeSelector) > 0 || !apiequality.Semantic.DeepEqual(required, objects.HostRequirement(cfg)) {
		return rule // a patch's
	}
	userTerms := cfg.Affinity != nil && cfg.Affinity.NodeAffinity != nil && cfg.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
	switch {
	case userTerms:
		rule.flag = config.FlagVMAffinity
	case len(cfg.Zones) > 0:
		rule.flag, rule.zonesOnly = config.FlagZone, true
	default:
		rule.flag, rule.zonesOnly = config.FlagRegion, true
	}
	return rule
}

// fits says whether the VM may run on host n by its labels (a host whose labels cannot be judged does not).
func (h hostRule) fits(n *corev1.Node) bool {
	ok, err := h.match.Match(n)
	return err == nil && ok
}

func placementGiven(in *Input) bool { return hostRuleOf(in.Machine).set }

// checkTopology makes sure some Harvester host meets what the VM requires of one (its zones and regions, its
// node affinity and nodeSelector): otherwise the VM could never be scheduled and would sit in
// ErrorUnschedulable. Users who may not list hosts are not blocked.
func checkTopology(ctx context.Context, r *run) {
	cfg, rule := r.cfg, hostRuleOf(r.in.Machine)
	nodes, err := kube.List(ctx, r.c, kube.Nodes, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		r.u.addf("the credential may not list nodes: cannot tell whether a Harvester host %s", rule.wanted(cfg))
		return
	case err != nil:
		r.p.Addf(rule.flag, "%v", r.c.Explain("list Harvester hosts to check", "zones and regions", err))
		return
	}
	zones, regions := map[string]bool{}, map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		fits, err := rule.match.Match(n)
		if err != nil {
			// The requirement itself is malformed (an operator or value the scheduler refuses): no host fits.
			r.p.Addf(rule.flag, "the VM's required node affinity cannot be judged: %v", err)
			return
		}
		if fits {
			return // one host fits
		}
		zones[n.Labels[corev1.LabelTopologyZone]], regions[n.Labels[corev1.LabelTopologyRegion]] = true, true
	}
	if !rule.zonesOnly {
		r.p.Addf(rule.flag, "no Harvester host %s (of %d hosts; they carry zones %s); label the hosts in Harvester (Hosts → Edit Config → Labels) or fix the flag",
			rule.wanted(cfg), len(nodes), lists.Join(labelValues(zones), "and"))
		return
	}
	have := zones
	if rule.flag == config.FlagRegion {
		have = regions
	}
	r.p.Addf(rule.flag, "no Harvester host %s (hosts carry: %s); label the hosts in Harvester (Hosts → Edit Config → Labels) or fix the flag",
		rule.wanted(cfg), lists.Join(labelValues(have), "and"))
}

// wanted words what the VM requires of a host: "is in zone-a within region us-east" for the zones' own
// requirement, else the VM's fields.
func (h hostRule) wanted(cfg *config.Config) string {
	if !h.zonesOnly {
		return "meets the VM's nodeSelector and required node affinity"
	}
	want := cfg.Zones
	if len(want) == 0 {
		want = cfg.Regions
	}
	return "is in " + lists.Join(want, "or") + topologyAnd(cfg)
}

func topologyAnd(cfg *config.Config) string {
	if len(cfg.Zones) > 0 && len(cfg.Regions) > 0 {
		return " within region " + lists.Join(cfg.Regions, "or")
	}
	return ""
}

// labelValues lists the label values seen, sorted, "(none)" standing for hosts without the label.
func labelValues(seen map[string]bool) []string {
	out := make([]string, 0, len(seen))
	for v := range seen {
		if v == "" {
			v = "(none)"
		}
		out = append(out, v)
	}
	return lists.SortedUnique(out)
}
