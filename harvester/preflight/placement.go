package preflight

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// checkNetworks makes sure the network (a NetworkAttachmentDefinition) of every bridge of the VM exists.
func checkNetworks(ctx context.Context, r *run) {
	for _, n := range vmNetworks(r.in.Machine) {
		if n.bad != "" {
			r.p.Addf(n.flag, "%s", n.bad)
			continue
		}
		_, err := kube.GetCached(ctx, r.c, kube.Networks, n.network.Namespace, n.network.Name)
		switch {
		case err == nil:
		case kube.IsMissing(err, n.network.Name):
			r.p.Addf(n.flag, "%s: network %s does not exist in Harvester (Networks → VM Networks)", n.nic, n.network)
		case apierrors.IsForbidden(err):
			r.u.addf("the credential may not get network-attachment-definitions in namespace %s: cannot tell whether network %s exists",
				n.network.Namespace, n.network)
		default:
			r.p.Addf(n.flag, "%v", r.c.Explain("read network", n.network.String(), err))
		}
	}
}

func zonesGiven(in *Input) bool {
	cfg := in.Machine.Config()
	return len(cfg.Zones) > 0 || len(cfg.Regions) > 0
}

// checkTopology makes sure some Harvester host is in one of the requested zones and regions: otherwise the VM
// could never be scheduled and would sit in ErrorUnschedulable. Users who may not list hosts are not blocked.
func checkTopology(ctx context.Context, r *run) {
	cfg := r.cfg
	nodes, err := kube.List(ctx, r.c, kube.Nodes, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		want := cfg.Zones
		if len(want) == 0 {
			want = cfg.Regions
		}
		r.u.addf("the credential may not list nodes: cannot tell whether a Harvester host is in %s%s", lists.Join(want, "or"), topologyAnd(cfg))
		return
	case err != nil:
		r.p.Addf(config.FlagZone, "%v", r.c.Explain("list Harvester hosts to check", "zones and regions", err))
		return
	}
	zones, regions := map[string]bool{}, map[string]bool{}
	for _, n := range nodes {
		zone, region := n.Labels[corev1.LabelTopologyZone], n.Labels[corev1.LabelTopologyRegion]
		zones[zone], regions[region] = true, true
		if inZones(cfg, zone, region) {
			return // one host fits
		}
	}
	flag, want, have := config.FlagZone, cfg.Zones, zones
	if len(cfg.Zones) == 0 {
		flag, want, have = config.FlagRegion, cfg.Regions, regions
	}
	r.p.Addf(flag, "no Harvester host is in %s%s (hosts carry: %s); label the hosts in Harvester (Hosts → Edit Config → Labels) or fix the flag",
		lists.Join(want, "or"), topologyAnd(cfg), lists.Join(labelValues(have), "and"))
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
