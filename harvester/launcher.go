package harvester

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// launcherScheduling reads the PodScheduled condition of the VMI's virt-launcher Pod, for a VMI whose own copy
// may be stale (staleScheduling). A Pod on a node counts as scheduled; a Pod the scheduler has not looked at yet,
// or no Pod yet (KubeVirt makes it on its next sync), gives an Unknown condition. It returns nil when Pods cannot
// be read — a credential may not list them — and the caller then goes by KubeVirt's word alone.
func launcherScheduling(ctx context.Context, c kube.Interface, vmi *kubevirtv1.VirtualMachineInstance) *corev1.PodCondition {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// KubeVirt labels the launcher Pods it makes for a VMI (pkg/virt-controller/services/template.go); there is
	// one, and a moment two while a terminating one is replaced.
	selector := kubevirtv1.AppLabel + "=virt-launcher," + kubevirtv1.CreatedByLabel + "=" + string(vmi.UID)
	pods, err := kube.List(ctx, c, kube.Pods, vmi.Namespace, metav1.ListOptions{LabelSelector: selector, Limit: 8})
	if err != nil {
		logging.Debugf("VM %s/%s: cannot read its virt-launcher Pod, going by the VMI's conditions: %v", vmi.Namespace, vmi.Name, err)
		return nil
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" {
			return &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled {
				return &cond
			}
		}
		return &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionUnknown}
	}
	return &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionUnknown}
}
