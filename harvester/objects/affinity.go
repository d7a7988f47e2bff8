package objects

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// vmAffinity is the scheduling affinity of the VM: podAffinity's spreading rules, plus the zone and region
// requirements (requireTopology).
func vmAffinity(cfg *config.Config) *corev1.Affinity {
	aff := podAffinity(cfg)
	requireTopology(aff, corev1.LabelTopologyZone, cfg.Zones)
	requireTopology(aff, corev1.LabelTopologyRegion, cfg.Regions)
	return aff
}

// podAffinity spreads VMs across hosts:
//
//   - Without --harvester-vm-affinity: Harvester's default for node-driver VMs, a soft (weight 100) anti-affinity
//     on hosts against every VM carrying the creator label (harvester/harvester#620), so VMs spread out.
//   - With it: the user's affinity as given, plus a soft anti-affinity term against the VMs of the same machine
//     set (harvesterhci.io/machineSetName) on the host topology, so a pool still spreads across hosts when the
//     user only pinned it to a zone. The reference driver added that term only when the user already had
//     pod (anti-)affinity, and also added it to podAffinity, which pulls a pool onto one host
//     (harvester/harvester#4588); here it goes to podAntiAffinity only.
func podAffinity(cfg *config.Config) *corev1.Affinity {
	if cfg.Affinity == nil {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
						Key: config.LabelCreator, Operator: metav1.LabelSelectorOpExists,
					}}},
					TopologyKey: corev1.LabelHostname,
				},
			}},
		}}
	}
	aff := cfg.Affinity.DeepCopy()
	if aff.PodAntiAffinity == nil {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.WeightedPodAffinityTerm{
			Weight: 1,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					config.LabelMachineSetName: machineSetName(cfg.Namespace, cfg.MachineName),
				}},
				TopologyKey: corev1.LabelHostname,
			},
		})
	return aff
}

// requireTopology adds a required node affinity "key In values" (--harvester-zone, --harvester-region). Node
// selector terms are ORed and the expressions within one are ANDed, so the requirement joins every term the
// user already has: the VM must satisfy the user's rules and be in one of the zones. Harvester copies the
// host's zone and region onto the VMI only for node-driver VMs, and the guest's cloud provider labels the node
// with them; pinning keeps a rebuilt VM in the zone its node was labelled with.
func requireTopology(aff *corev1.Affinity, key string, values []string) {
	if len(values) == 0 {
		return
	}
	req := corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	if aff.NodeAffinity == nil {
		aff.NodeAffinity = &corev1.NodeAffinity{}
	}
	if aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	sel := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(sel.NodeSelectorTerms) == 0 {
		sel.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range sel.NodeSelectorTerms {
		sel.NodeSelectorTerms[i].MatchExpressions = append(sel.NodeSelectorTerms[i].MatchExpressions, req)
	}
}

// HostRequirement is the required node affinity the flags alone give the VM: --harvester-vm-affinity's, with the
// zones and regions joined to each of its terms (requireTopology); nil when they require nothing of a host. The
// pre-flight tells by it whether the VM's requirement is the flags' or a patch's.
func HostRequirement(cfg *config.Config) *corev1.NodeSelector {
	if aff := vmAffinity(cfg); aff.NodeAffinity != nil {
		return aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}
