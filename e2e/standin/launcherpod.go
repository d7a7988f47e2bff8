package standin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// launcherSelector selects the virt-launcher Pods KubeVirt's VMI controller makes
// (kubevirt/kubevirt pkg/virt-controller/services/template.go: kubevirt.io=virt-launcher).
var launcherSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.AppLabel: "virt-launcher"})

// unscheduledRetry is how often an unschedulable launcher Pod is tried again (nodes may have changed).
const unscheduledRetry = time.Second

// syncPod plays kube-scheduler and kubelet for one virt-launcher Pod, each after Options.PhaseDelay: it binds the
// Pod to a node that fits (pickNode) or marks it PodScheduled=False, reason Unschedulable, with the scheduler's
// message; runs a bound Pod (phase Running, a pod IP, every container started and ready: what KubeVirt's VMI
// controller waits for before it reports the VMI Scheduled, pkg/controller/controller.go IsPodReady); ends a
// running Pod when its VMI is final (endPod); and removes a terminating Pod once its VMI is final or gone (the
// launcher exits when the guest has stopped).
func (s *StandIn) syncPod(ctx context.Context, namespace, name string) (time.Duration, error) {
	pod, err := s.pods.Pods(namespace).Get(name)
	if err != nil {
		return 0, ignoreNotFound(err)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "VirtualMachineInstance" {
		return 0, nil // not a VMI's launcher (a hotplug or temporary Pod): nothing here runs those
	}
	vmi, err := cached[*kubevirtv1.VirtualMachineInstance](s.vmis, namespace, owner.Name)
	if err != nil {
		return 0, err
	}
	if vmi != nil && vmi.UID != owner.UID {
		vmi = nil // a new VMI of the same name; this Pod's is gone
	}
	vm, err := cached[*kubevirtv1.VirtualMachine](s.vms, namespace, owner.Name)
	if err != nil {
		return 0, err
	}
	switch {
	case pod.DeletionTimestamp != nil:
		if vmi != nil && !vmi.IsFinal() {
			return 0, nil // virt-handler is still stopping the guest; the VMI's change brings the Pod back
		}
		grace := int64(0)
		err := s.kube.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace,
			Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		s.forget(pod.UID)
		return 0, ignoreNotFound(err)
	case pod.Spec.NodeName == "":
		if wait := s.opts.PhaseDelay - s.elapsed(pod.UID, "unscheduled"); wait > 0 {
			return wait, nil
		}
		return s.schedulePod(ctx, pod, owner.Name, vm)
	case pod.Status.Phase == corev1.PodPending:
		if wait := s.opts.PhaseDelay - s.elapsed(pod.UID, "bound"); wait > 0 {
			return wait, nil
		}
		return 0, s.runPod(ctx, pod, vm)
	case pod.Status.Phase == corev1.PodRunning && vmi != nil && vmi.IsFinal():
		return 0, s.endPod(ctx, pod, vmi)
	}
	return 0, nil
}

// endPod is kubelet seeing virt-launcher exit once the guest is gone (virt-handler reported the VMI final): the
// Pod's phase follows the VMI's, its containers terminated. KubeVirt's VMI controller then deletes it, and drops
// the VMI's finalizers once it is gone (pkg/virt-controller/watch/vmi/lifecycle.go, case vmi.IsFinal()).
func (s *StandIn) endPod(ctx context.Context, pod *corev1.Pod, vmi *kubevirtv1.VirtualMachineInstance) error {
	upd := pod.DeepCopy()
	phase, exit, reason := corev1.PodSucceeded, int32(0), "Completed"
	if vmi.Status.Phase == kubevirtv1.Failed {
		phase, exit, reason = corev1.PodFailed, 1, "Error"
	}
	upd.Status.Phase = phase
	now := metav1.Now()
	for i := range upd.Status.ContainerStatuses {
		c := &upd.Status.ContainerStatuses[i]
		started := now
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		c.Ready, c.Started = false, ptr.To(false)
		c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, StartedAt: started, FinishedAt: now}}
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(upd, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodCompleted"})
	}
	_, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// LauncherLabels are the labels KubeVirt's VMI controller gives the virt-launcher Pods it makes for the VMI of
// UID uid (kubevirt/kubevirt pkg/virt-controller/services/template.go); as a selector they find those Pods.
func LauncherLabels(uid types.UID) labels.Set {
	return labels.Set{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: string(uid)}
}

// launcherPodsOf names the launcher Pods the VMI vmi made.
func (s *StandIn) launcherPodsOf(vmi metav1.Object) []string {
	pods, _ := s.pods.Pods(vmi.GetNamespace()).List(labels.SelectorFromSet(LauncherLabels(vmi.GetUID())))
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// schedulePod is kube-scheduler for a launcher Pod: bind it to the node pickNode chooses, or say why none fits.
func (s *StandIn) schedulePod(ctx context.Context, pod *corev1.Pod, vmiName string, vm *kubevirtv1.VirtualMachine) (time.Duration, error) {
	// One decision at a time, and the Pod counts on its node until the cache shows it bound (assume.go).
	s.assumed.mu.Lock()
	defer s.assumed.mu.Unlock()
	p := placement{key: pod.Namespace + "/" + vmiName, nodeSelector: pod.Spec.NodeSelector, affinity: pod.Spec.Affinity,
		want: extendedRequests(pod), held: func(node string) map[string]int64 { return s.podDevicesOn(node, pod) }}
	node, msg := s.pickNode(p)
	retry := unscheduledRetry
	if vm != nil && s.injected(vm, InjectUnschedulable) {
		node, msg = "", insufficientMemory(s.nodeCount())
	}
	if claim, exists := s.unboundClaim(pod); claim != "" {
		// kube-scheduler's VolumeBinding filter (k8s.io/kubernetes pkg/scheduler/framework/plugins/volumebinding);
		// the stand-in's provisioner binds the PVC soon.
		n := s.nodeCount()
		why := "pod has unbound immediate PersistentVolumeClaims"
		if !exists {
			why = fmt.Sprintf("persistentvolumeclaim %q not found", claim)
		}
		node, msg, retry = "", fmt.Sprintf("0/%d nodes are available: %s. "+
			"preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", n, why, n, n), 100*time.Millisecond
	}
	if node == "" {
		if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Message == msg {
			return retry, nil
		}
		upd := pod.DeepCopy()
		setPodCondition(upd, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: msg})
		_, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		return retry, err
	}
	// The binding subresource sets nodeName and PodScheduled=True, as for kube-scheduler's bind.
	s.assumed.add(pod.UID, node, p.want)
	err := s.kube.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		s.assumed.forget(pod.UID) // kube-scheduler's ForgetPod when the bind fails
	}
	return 0, err
}

// runPod is kubelet starting a bound launcher Pod: every container running and ready, a pod IP. An injected
// image pull error leaves the compute container waiting with ErrImagePull instead, which KubeVirt's VMI controller
// reports (pkg/virt-controller/watch/vmi/lifecycle.go checkForContainerImageError).
func (s *StandIn) runPod(ctx context.Context, pod *corev1.Pod, vm *kubevirtv1.VirtualMachine) error {
	upd := pod.DeepCopy()
	st := &upd.Status
	now := metav1.Now()
	if node, err := s.nodes.Get(pod.Spec.NodeName); err == nil {
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				st.HostIP, st.HostIPs = a.Address, []corev1.HostIP{{IP: a.Address}}
			}
		}
	}
	st.StartTime = &now
	if vm != nil && s.injected(vm, InjectImagePullError) {
		st.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull",
					Message: fmt.Sprintf("failed to pull and unpack image %q: not found", c.Image)}}})
		}
		if equalStatuses(pod.Status.ContainerStatuses, st.ContainerStatuses) {
			return nil
		}
		_, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		return err
	}
	ip := podIP(pod)
	st.Phase = corev1.PodRunning
	st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	st.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(upd, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue})
	}
	_, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// unboundClaim names a PVC of the Pod that is not Bound, and whether it exists, or "".
func (s *StandIn) unboundClaim(pod *corev1.Pod) (claim string, exists bool) {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := s.pvcs.PersistentVolumeClaims(pod.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			return v.PersistentVolumeClaim.ClaimName, err == nil
		}
	}
	return "", false
}

// extendedRequests sums a Pod's requests of extended resources (device plugins' "vendor/name" resources:
// devices.kubevirt.io/kvm, host devices, vGPUs), which kube-scheduler counts against a node's allocatable.
func extendedRequests(pod *corev1.Pod) map[string]int64 {
	want := map[string]int64{}
	for _, c := range pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			if strings.Contains(string(name), "/") {
				want[string(name)] += q.Value()
			}
		}
	}
	return want
}

// podDevicesOn sums the extended requests of the launcher Pods bound (or assumed) to node but self and those
// that ended.
func (s *StandIn) podDevicesOn(node string, self *corev1.Pod) map[string]int64 {
	held := map[string]int64{}
	pods, _ := s.pods.List(launcherSelector)
	s.assumed.addTo(held, node, self.UID, pods)
	for _, p := range pods {
		if p.Spec.NodeName != node || p.UID == self.UID || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for res, n := range extendedRequests(p) {
			held[res] += n
		}
	}
	return held
}

// devicePluginResources are virt-handler's permanent device plugins and how many devices each advertises
// (kubevirt/kubevirt pkg/virt-handler/device-manager/device_controller.go PermanentHostDevicePlugins, with
// cmd/virt-handler/virt-handler.go maxDevices = 1000); kubelet reports them in the node's capacity, and every
// launcher Pod requests one of each it uses.
var devicePluginResources = []corev1.ResourceName{"devices.kubevirt.io/kvm", "devices.kubevirt.io/tun", "devices.kubevirt.io/vhost-net"}

// registerDevicePlugins is virt-handler's device plugins on every node, as kubelet reports them: the nodes'
// capacity and allocatable gain devicePluginResources. Launcher Pods request them, and kube-scheduler would not
// place a Pod on a node without them.
func (s *StandIn) registerDevicePlugins(ctx context.Context) error {
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		if err := s.addDevicePlugins(ctx, &nodes.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// syncNode adds virt-handler's device plugins to a node that came after the stand-in started.
func (s *StandIn) syncNode(ctx context.Context, name string) error {
	n, err := s.nodes.Get(name)
	if err != nil {
		return ignoreNotFound(err)
	}
	return s.addDevicePlugins(ctx, n.DeepCopy())
}

func (s *StandIn) addDevicePlugins(ctx context.Context, n *corev1.Node) error {
	if hasDevicePlugins(n) {
		return nil
	}
	if n.Status.Capacity == nil {
		n.Status.Capacity = corev1.ResourceList{}
	}
	if n.Status.Allocatable == nil {
		n.Status.Allocatable = corev1.ResourceList{}
	}
	for _, r := range devicePluginResources {
		n.Status.Capacity[r] = *resource.NewQuantity(1000, resource.DecimalSI)
		n.Status.Allocatable[r] = *resource.NewQuantity(1000, resource.DecimalSI)
	}
	if _, err := s.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("register virt-handler's device plugins on node %s: %w", n.Name, err)
	}
	return nil
}

func hasDevicePlugins(n *corev1.Node) bool {
	_, ok := n.Status.Allocatable[devicePluginResources[0]]
	return ok
}

// podIP is a stable made-up address in Harvester's pod network (10.52.0.0/16) for a Pod.
func podIP(pod *corev1.Pod) string {
	h := hash(string(pod.UID))
	return fmt.Sprintf("10.52.%d.%d", h>>8&0xff, h&0xfe+1)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// setPodCondition sets c on pod, with now as its transition time when its status changes.
func setPodCondition(pod *corev1.Pod, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	if old := podCondition(pod, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

func equalStatuses(a, b []corev1.ContainerStatus) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.ContainerStatus) bool {
		return x.Name == y.Name && x.State.Waiting != nil && y.State.Waiting != nil && x.State.Waiting.Reason == y.State.Waiting.Reason
	})
}
