package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

var imageResource = schema.GroupVersionResource{Group: "harvesterhci.io", Version: "v1beta1", Resource: "virtualmachineimages"}

// ensurePVCs does what Harvester's VM controller does with the volumeClaimTemplates annotation
// (createPVCsFromAnnotation): it creates each listed PVC that does not exist yet, in the VM's namespace and
// without an owner, so the disks outlive the VM unless they are named for removal. A claim whose
// harvesterhci.io/imageId names a missing image is skipped, as Harvester skips it (and the VMI then waits
// for a PVC that never comes: ErrorPvcNotFound).
func (s *StandIn) ensurePVCs(ctx context.Context, vm *kubevirtv1.VirtualMachine) error {
	raw, ok := vm.Annotations[annotationVolumeClaimTemplates]
	if !ok || raw == "" {
		return nil
	}
	var claims []corev1.PersistentVolumeClaim
	if err := json.Unmarshal([]byte(raw), &claims); err != nil {
		// Harvester's handler fails the same way and retries; nothing is created.
		return fmt.Errorf("annotation %s is not a JSON list of PVCs: %w", annotationVolumeClaimTemplates, err)
	}
	for _, c := range claims {
		if _, err := s.pvcs.PersistentVolumeClaims(vm.Namespace).Get(c.Name); err == nil {
			continue
		}
		if id := c.Annotations[annotationImageID]; id != "" {
			ns, name, found := strings.Cut(id, "/")
			if found {
				_, err := s.dyn.Resource(imageResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					s.opts.Logf("standin: vm %s/%s: image %s of PVC %s does not exist, PVC not created", vm.Namespace, vm.Name, id, c.Name)
					continue
				}
				if err != nil {
					return err
				}
			}
		}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: vm.Namespace, Labels: c.Labels, Annotations: c.Annotations},
			Spec:       c.Spec,
		}
		if _, err := s.kube.CoreV1().PersistentVolumeClaims(vm.Namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PVC %s from %s: %w", c.Name, annotationVolumeClaimTemplates, err)
		}
	}
	return nil
}

// removePVCs deletes the PVCs named in removedPersistentVolumeClaims, as Harvester's VM OnRemove handler does
// (removePVCInRemovedPVCsAnnotation). Harvester gives removeAllPersistentVolumeClaims no meaning: the node driver
// turns it into the removed list itself (harvester/remove.go), so it is ignored here too.
func (s *StandIn) removePVCs(ctx context.Context, vm *kubevirtv1.VirtualMachine) error {
	for _, name := range strings.Split(vm.Annotations[annotationRemovedPVCs], ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		err := s.kube.CoreV1().PersistentVolumeClaims(vm.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PVC %s/%s named in %s: %w", vm.Namespace, name, annotationRemovedPVCs, err)
		}
	}
	return nil
}

// syncPVC is the storage provisioner: a pending PVC of an existing storage class becomes Bound after
// Options.BindDelay (status only: no PersistentVolume is made). A PVC of an unknown class stays Pending, as it
// would with no provisioner for it. Every change is passed on to the VMs that use the claim.
func (s *StandIn) syncPVC(ctx context.Context, namespace, name string) (time.Duration, error) {
	s.enqueueUsers(namespace, name)
	pvc, err := s.pvcs.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if pvc.DeletionTimestamp != nil || pvc.Status.Phase == corev1.ClaimBound {
		if pvc.DeletionTimestamp != nil {
			s.forget(pvc.UID)
		}
		return 0, nil
	}
	if !s.provisionable(pvc) {
		return 0, nil
	}
	if wait := s.opts.BindDelay - s.elapsed(pvc.UID, "pending"); wait > 0 {
		return wait, nil
	}
	bound := pvc.DeepCopy()
	bound.Status.Phase = corev1.ClaimBound
	bound.Status.AccessModes = pvc.Spec.AccessModes
	bound.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]}
	_, err = s.kube.CoreV1().PersistentVolumeClaims(namespace).UpdateStatus(ctx, bound, metav1.UpdateOptions{})
	return 0, err
}

// provisionable reports whether a provisioner would serve the claim: its storage class exists (an empty class
// name means static binding, which nothing here does).
func (s *StandIn) provisionable(pvc *corev1.PersistentVolumeClaim) bool {
	if pvc.Spec.StorageClassName == nil {
		// The DefaultStorageClass admission plugin fills the name in at creation when a default class exists.
		return false
	}
	_, err := s.classes.Get(*pvc.Spec.StorageClassName)
	return err == nil
}

// enqueueUsers queues the VMs in namespace whose volumes use the claim.
func (s *StandIn) enqueueUsers(namespace, claim string) {
	objs, _ := s.vms.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	for _, obj := range objs {
		vm, ok := obj.(*kubevirtv1.VirtualMachine)
		if !ok || vm.Spec.Template == nil {
			continue
		}
		for _, v := range vm.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				s.queue.Add(key{namespace: namespace, name: vm.Name})
				break
			}
		}
	}
}
