package harvester

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// vmAffinity is the scheduling affinity of the VM.
//
//   - Without --harvester-vm-affinity: Harvester's default for node-driver VMs, a soft (weight 100) anti-affinity
//     on hosts against every VM carrying the creator label (harvester/harvester#620), so VMs spread out.
//   - With it: the user's affinity as given, plus a soft anti-affinity term against the VMs of the same machine
//     set (harvesterhci.io/machineSetName) on the host topology, so a pool still spreads across hosts when the
//     user only pinned it to a zone. The reference driver added that term only when the user already had
//     pod (anti-)affinity, and also added it to podAffinity, which pulls a pool onto one host
//     (harvester/harvester#4588); here it goes to podAntiAffinity only.
func vmAffinity(cfg *Config) *corev1.Affinity {
	if cfg.Affinity == nil {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
						Key: LabelCreator, Operator: metav1.LabelSelectorOpExists,
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
					LabelMachineSetName: machineSetName(cfg.Namespace, cfg.MachineName),
				}},
				TopologyKey: corev1.LabelHostname,
			},
		})
	return aff
}
