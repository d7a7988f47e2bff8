package harvester

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/build"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// removeTimeout bounds a remove, which waits until the VM is gone.
const removeTimeout = 10 * time.Minute

// Remove deletes the machine's VM (with its volumes, see removeVM) and its cloud-init Secret, waits until the
// VM is gone, then releases its static address, if any. It needs only what is saved before Create runs (name,
// namespace, cluster name), so it also cleans up after a create that died. It is idempotent: with the VM and the
// Secret already gone it succeeds.
//
// rancher-machine's rm treats an error containing "not found" as success; every real failure is worded without
// that phrase, so a failed remove is never mistaken for a done one and the VM is not leaked.
func (d *Driver) Remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	c, err := d.api()
	if err != nil {
		return scrubNotFound(err)
	}
	err = d.removeVM(ctx, c, "")
	err = errors.Join(err, d.deleteCloudInitSecret(ctx, c))
	if err == nil { // an address goes only once its VM has
		err = ippool.ReleaseMachine(ctx, c, d.IPPoolNetwork, d.machine())
	}
	return scrubNotFound(err)
}

// removeAccess is what removeVM needs besides the watch: it sets the claims annotation, then deletes.
var removeAccess = []kube.Access{
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "update"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "delete"},
}

// removeVM deletes the VM named by the machine — only if this driver made it, and, when uid is set, only that
// very VM — after listing its volumes in harvesterhci.io/removedPersistentVolumeClaims so Harvester deletes them
// with it (see claimsToRemove). The delete propagates in the foreground (the VMI goes first) and removeVM waits,
// by watch, until the VM is gone.
func (d *Driver) removeVM(ctx context.Context, c kube.Interface, uid types.UID) error {
	ns, name := d.namespace(), d.MachineName
	vms := c.VirtualMachines(ns)
	vm, err := vms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case kube.IsGone(err, "virtualmachines", name):
		logging.Infof("VM %s/%s is already gone", ns, name)
		return nil
	case err != nil:
		return c.Explain("read VM", ns+"/"+name, err)
	case uid != "" && vm.UID != uid:
		return nil // a VM of that name that this create did not make
	case vm.Labels[config.LabelCreator] != config.CreatorName:
		return fmt.Errorf("refusing to delete VM %s/%s: it was not created by a node driver (label %s is %q, want %q)",
			ns, name, config.LabelCreator, vm.Labels[config.LabelCreator], config.CreatorName)
	}

	if vm.DeletionTimestamp == nil {
		claims, err := d.claimsToRemove(ctx, c, vm)
		if err != nil {
			return err
		}
		logging.Infof("Removing VM %s/%s and its volumes %s", ns, name, strings.Join(claims, ", "))
		if err := annotateRemovedClaims(ctx, c, ns, name, vm.UID, claims); err != nil {
			return err
		}
		err = vms.Delete(ctx, name, metav1.DeleteOptions{
			PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
			Preconditions:     &metav1.Preconditions{UID: &vm.UID},
		})
		if err != nil && !kube.IsGone(err, "virtualmachines", name) {
			return c.Explain("delete VM", ns+"/"+name, err)
		}
	}
	last, err := waitFor(ctx, c, ns, name, 0, func(s snapshot) (bool, error) { return s.VM == nil || s.VM.UID != vm.UID, nil })
	if err != nil {
		return fmt.Errorf("VM %s/%s is still being deleted after %s (%s; finalizers %v): %w. Check the VM in Harvester",
			ns, name, removeTimeout, describe(last), finalizers(last), err)
	}
	logging.Infof("VM %s/%s is gone", ns, name)
	return nil
}

// claimsToRemove lists the claims Harvester is to delete with the VM: its volumes' claims, except hot-plugged
// ones (volumes the guest cluster's CSI driver attached; they belong to the guest cluster's workloads and must
// survive a node's re-provisioning, harvester/harvester#3272). When Rancher deletes the whole guest cluster it
// sets harvesterhci.io/removeAllPersistentVolumeClaims=true: then the hot-plugged claims go too, and so does every
// claim in the namespace labelled with the guest cluster, attached or not (rancher/rancher#39111).
func (d *Driver) claimsToRemove(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine) ([]string, error) {
	all := vm.Annotations[config.AnnotationRemoveAllPVCs] == "true"
	names := vmClaims(vm, all)
	if all && d.ClusterName != "" {
		list, err := kube.List(ctx, c, kube.Claims, vm.Namespace, metav1.ListOptions{LabelSelector: config.LabelGuestCluster + "=" + d.ClusterName})
		if err != nil {
			return nil, c.Explain("list the guest cluster's volumes in namespace", vm.Namespace, err)
		}
		for _, pvc := range list {
			names = append(names, pvc.Name)
		}
	}
	return lists.SortedUnique(names), nil
}

// vmClaims returns the claim names of a VM's volumes; hot-plugged ones only when all is set.
func vmClaims(vm *kubevirtv1.VirtualMachine, all bool) []string {
	var names []string
	if vm.Spec.Template == nil {
		return names
	}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil && (all || !v.PersistentVolumeClaim.Hotpluggable):
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		case v.DataVolume != nil && (all || !v.DataVolume.Hotpluggable):
			names = append(names, v.DataVolume.Name) // a DataVolume's claim has its name
		}
	}
	return names
}

// annotateRemovedClaims records the claims in the VM's removedPersistentVolumeClaims annotation (joined with any
// already there), retrying on update conflicts.
func annotateRemovedClaims(ctx context.Context, c kube.Interface, ns, name string, uid types.UID, claims []string) error {
	vms := c.VirtualMachines(ns)
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		vm, err := vms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if vm.UID != uid {
			return apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), name, errors.New("the VM was replaced"))
		}
		if old := vm.Annotations[config.AnnotationRemovedPVCs]; old != "" {
			claims = lists.SortedUnique(append(claims, strings.Split(old, ",")...))
		}
		if vm.Annotations == nil {
			vm.Annotations = map[string]string{}
		}
		vm.Annotations[config.AnnotationRemovedPVCs] = strings.Join(claims, ",")
		_, err = vms.Update(ctx, vm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return c.Explain("mark the volumes of VM", ns+"/"+name+" for removal", err)
	}
	return nil
}

// deleteCloudInitSecret deletes the machine's cloud-init Secret if this driver made it. Normally the garbage
// collector has removed it with the VM; after a create that died before the VM existed it has not.
func (d *Driver) deleteCloudInitSecret(ctx context.Context, c kube.Interface) error {
	ns, name := d.namespace(), build.CloudInitSecretName(d.MachineName)
	secret, err := kube.Get(ctx, c, kube.Secrets, ns, name)
	switch {
	case kube.IsGone(err, "secrets", name):
		return nil
	case err != nil:
		return c.Explain("read Secret", ns+"/"+name, err)
	case secret.Labels[config.LabelCreator] != config.CreatorName || secret.Labels[config.LabelVMName] != d.MachineName:
		logging.Debugf("Secret %s/%s was not made by this driver for this machine; left alone", ns, name)
		return nil
	}
	err = kube.Delete(ctx, c, kube.Secrets, ns, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &secret.UID}})
	if err != nil && !kube.IsGone(err, "secrets", name) {
		return c.Explain("delete Secret", ns+"/"+name, err)
	}
	return nil
}

func finalizers(s snapshot) []string {
	if s.VM == nil {
		return nil
	}
	return s.VM.Finalizers
}
