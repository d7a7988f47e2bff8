package harvester

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// removeTimeout bounds a remove, which waits until the VM is gone.
const removeTimeout = 10 * time.Minute

// Remove deletes the machine's VM (with its volumes, see removeVM) and its cloud-init Secret, waits until the
// VM is gone, then releases its static address, if any. It needs only what is saved before Create runs (name,
// namespace, cluster name, create id), so it also cleans up after a create that died. It is idempotent: with the
// VM and the Secret already gone it succeeds.
//
// The Secret of a machine whose create finished is its VM's dependent: the create hands it to the VM (an owner
// reference) before it returns, and rancher-machine records the VM's UID (d.VMUID) only after Create returned.
// When this remove deleted that VM itself, in the foreground, Kubernetes' garbage collector deletes the Secret
// with it (kubernetes v1.36.3 pkg/controller/garbagecollector: graph_builder.go processTransitions queues every
// dependent of an owner that starts deleting its dependents, and garbagecollector.go attemptToDeleteItem deletes
// one whose owners are all gone or being deleted so), so Remove does not read it. Otherwise — a create that died
// before the handover, a VM already gone or being deleted by someone else, a machine without a recorded UID —
// it reads the Secret and deletes it if it is the machine's own.
//
// It touches only what is the machine's own (see ownership.go): a VM of the machine's name that another create
// made — the machine's store entry outlived its own VM — is left alone with its Secret and address, and Remove
// succeeds, so rancher-machine drops the stale entry; it says so at Info. A machine without ownership records
// (reference driver, earlier versions) refuses a VM without the creator label, as before.
//
// rancher-machine's rm treats an error containing "not found" as success; every real failure is worded without
// that phrase, so a failed remove is never mistaken for a done one and the VM is not leaked.
func (d *Driver) Remove() (err error) {
	defer d.named(&err)
	d.created = nil
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	c, err := d.api()
	if err != nil {
		return kube.ScrubNotFound(err)
	}
	if warning := connection.RemoveExpiryWarning(d.credentialExpiry(ctx), time.Now()); warning != "" {
		logging.Infof("%s", d.id.Text(warning))
	}
	vm, err := d.getVM(ctx, c)
	if err != nil {
		return kube.ScrubNotFound(err)
	}
	vmUID := types.UID(d.VMUID) // the machine's VM, when known
	secretWentWithVM := false
	switch notOurs := (*notOursError)(nil); {
	case vm == nil:
		logging.Infof("VM %s/%s is already gone", d.namespace(), d.MachineName)
	case errors.As(d.checkOwnVM(vm), &notOurs):
		logging.Infof("%s", notOurs.leftAlone())
	case vm.Labels[config.LabelCreator] != config.CreatorName:
		err = fmt.Errorf("refusing to delete VM %s/%s: it was not created by a node driver (label %s is %q, want %q)",
			vm.Namespace, vm.Name, config.LabelCreator, vm.Labels[config.LabelCreator], config.CreatorName)
	default:
		vmUID = vm.UID
		deletes := vm.DeletionTimestamp == nil // else someone else deletes it, with a propagation this remove did not choose
		err = d.removeVM(ctx, c, vm, deletes && d.removesGuestVolumes(ctx, vm))
		secretWentWithVM = err == nil && deletes && d.VMUID != ""
	}
	if !secretWentWithVM {
		err = errors.Join(err, d.deleteCloudInitSecret(ctx, c, vmUID))
	}
	if err == nil { // an address goes only once its VM has
		err = d.releaseAddress(ctx, c, vmUID)
	}
	if err == nil && vmUID != "" {
		err = d.awaitLeaseRelease(ctx, c, vmUID) // Harvester's managed DHCP releases it (create_lease.go)
	}
	return kube.ScrubNotFound(err)
}

// releaseAddress releases the machine's static address, if it has a pool. A machine with ownership records
// releases only the allocation that records its VM's UID; without a known UID (its create died before making
// the VM, or the VM is gone unrecorded) it releases none — a later create of the same name may hold one, and an
// allocation whose VM never appeared is reclaimed once its lifetime is over (see harvester/ippool).
func (d *Driver) releaseAddress(ctx context.Context, c kube.Interface, vmUID types.UID) error {
	if !d.legacyOwnership() && vmUID == "" {
		if d.IPPoolNetwork != "" {
			logging.Debugf("No VM of machine %s is known; its address allocation, if any, is reclaimed when it expires", d.MachineName)
		}
		return nil
	}
	return ippool.ReleaseMachine(ctx, c, d.IPPoolNetwork, d.machine(), vmUID)
}

// removeAccess is what removeVM needs besides the watch: it sets the claims annotation, then deletes.
var removeAccess = []kube.Access{
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "update"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "delete"},
}

// cleanupAccess is what a remove needs besides removeAccess, in the VM namespace, only at times: the cloud-init
// Secret read and deleted when the garbage collector may not take it (deleteCloudInitSecret), and the guest
// cluster's claims listed when Rancher deletes the whole cluster (claimsToRemove). The access review does not ask
// for it: a remove that needs none of it must not be refused for it.
var cleanupAccess = []kube.Access{
	{Resource: "secrets", Verb: "get"},
	{Resource: "secrets", Verb: "delete"},
	{Resource: "persistentvolumeclaims", Verb: "list"},
}

// removeVM deletes vm — the caller has made sure it is the machine's — after listing its volumes in
// harvesterhci.io/removedPersistentVolumeClaims so Harvester deletes them with it (see claimsToRemove; all: the
// guest cluster's too, see removesGuestVolumes). The
// annotation and the delete carry vm's UID as a precondition, so a VM of the same name made since is never
// touched. The delete propagates in the foreground (the VMI goes first) and removeVM waits, by watch, until the
// VM is gone.
func (d *Driver) removeVM(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine, all bool) error {
	ns, name := vm.Namespace, vm.Name
	if vm.DeletionTimestamp == nil {
		claims, err := d.claimsToRemove(ctx, c, vm, all)
		if err != nil {
			return err
		}
		logging.Infof("Removing VM %s/%s and its volumes %s", ns, name, strings.Join(claims, ", "))
		for _, claim := range keptClaims(vm) {
			logging.Infof("Keeping volume %s of VM %s/%s (\"autoDelete\": false in --%s); delete it when it is no longer needed: kubectl -n %s delete pvc %s",
				claim, ns, name, d.id.Flag(config.FlagDiskInfo), ns, claim)
		}
		if err := annotateRemovedClaims(ctx, c, vm, claims, all); err != nil {
			return err
		}
		// The UID precondition makes a retried delete safe: once the VM is being deleted, a retry changes nothing.
		err = kube.RetryTransient(func() error {
			return c.VirtualMachines(ns).Delete(ctx, name, metav1.DeleteOptions{
				PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
				Preconditions:     &metav1.Preconditions{UID: &vm.UID},
			})
		})
		if err != nil && !kube.IsGone(err, "virtualmachines", name) {
			return c.Explain("delete VM", ns+"/"+name, err)
		}
	}
	// The VM alone is watched: deleted in the foreground, it goes only after its VMI (see kube.Client.WatchVM).
	m, err := c.WatchVM(ctx, ns, name, func(m kube.Machine) (bool, error) { return m.VM == nil || m.VM.UID != vm.UID, nil })
	if err != nil {
		last := snapshot(m)
		return fmt.Errorf("VM %s/%s is still being deleted after %s (VM %s; finalizers %v): %w. Check the VM in Harvester",
			ns, name, removeTimeout, orUnknown(string(last.printableStatus())), finalizers(last), err)
	}
	logging.Infof("VM %s/%s is gone", ns, name)
	return nil
}

// claimsToRemove lists the claims Harvester is to delete with the VM: its volumes' claims, except hot-plugged
// ones (volumes the guest cluster's CSI driver attached; they belong to the guest cluster's workloads and must
// survive a node's re-provisioning, harvester/harvester#3272). When the whole guest cluster is deleted (all: Rancher
// set harvesterhci.io/removeAllPersistentVolumeClaims=true, or the machine's cluster is being deleted, see
// removesGuestVolumes) the hot-plugged claims go too, and so does every claim in the namespace labelled with the
// guest cluster, attached or not (rancher/rancher#39111).
func (d *Driver) claimsToRemove(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine, all bool) ([]string, error) {
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

// keptVolumes are the names of the VM's volumes that Remove leaves ("autoDelete": false), from the annotation the
// builder sets.
func keptVolumes(vm *kubevirtv1.VirtualMachine) []string {
	if v := vm.Annotations[config.AnnotationKeptVolumes]; v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// keptClaims returns the claim names of the VM's volumes that Remove leaves.
func keptClaims(vm *kubevirtv1.VirtualMachine) []string {
	var names []string
	if vm.Spec.Template == nil {
		return names
	}
	kept := keptVolumes(vm)
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if slices.Contains(kept, v.Name) && v.PersistentVolumeClaim != nil {
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}

// vmClaims returns the claim names of a VM's volumes; hot-plugged ones only when all is set.
func vmClaims(vm *kubevirtv1.VirtualMachine, all bool) []string {
	var names []string
	if vm.Spec.Template == nil {
		return names
	}
	kept := keptVolumes(vm)
	for _, v := range vm.Spec.Template.Spec.Volumes {
		switch {
		case slices.Contains(kept, v.Name):
			// "autoDelete": false: the user keeps this volume, even when Rancher deletes the whole cluster.
		case v.PersistentVolumeClaim != nil && (all || !v.PersistentVolumeClaim.Hotpluggable):
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		case v.DataVolume != nil && (all || !v.DataVolume.Hotpluggable):
			names = append(names, v.DataVolume.Name) // a DataVolume's claim has its name
		}
	}
	return names
}

// annotateRemovedClaims records the claims in read's removedPersistentVolumeClaims annotation (joined with any
// already there), and with all the guest cluster's removal in removeAllPersistentVolumeClaims as Rancher records it,
// retrying at once on update conflicts (but not once the VM is found replaced), and after a pause on transient
// failures. The first update is of read, the VM as Remove read it; each retry reads the VM again. Every update
// carries the resourceVersion read, so a retry never applies twice.
func annotateRemovedClaims(ctx context.Context, c kube.Interface, read *kubevirtv1.VirtualMachine, claims []string, all bool) error {
	ns, name, uid := read.Namespace, read.Name, read.UID
	vms := c.VirtualMachines(ns)
	replaced := false
	conflict := func(err error) bool { return apierrors.IsConflict(err) && !replaced }
	first := true
	update := func() error {
		vm := read.DeepCopy()
		if !first {
			var err error
			if vm, err = vms.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		first = false
		if vm.UID != uid {
			replaced = true
			return apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), name, errors.New("the VM was replaced"))
		}
		old := vm.Annotations[config.AnnotationRemovedPVCs]
		if old != "" {
			claims = lists.SortedUnique(append(claims, strings.Split(old, ",")...))
		}
		markAll := all && vm.Annotations[config.AnnotationRemoveAllPVCs] != "true"
		if old == strings.Join(claims, ",") && !markAll {
			return nil // already marked: by a remove of the same machine running beside this one, say
		}
		if vm.Annotations == nil {
			vm.Annotations = map[string]string{}
		}
		vm.Annotations[config.AnnotationRemovedPVCs] = strings.Join(claims, ",")
		if markAll {
			vm.Annotations[config.AnnotationRemoveAllPVCs] = "true"
		}
		_, err := vms.Update(ctx, vm, metav1.UpdateOptions{})
		return err
	}
	err := kube.RetryTransient(func() error { return retry.OnError(kube.ConflictBackoff, conflict, update) })
	if err != nil {
		return c.Explain("mark the volumes of VM", ns+"/"+name+" for removal", err)
	}
	return nil
}

// deleteCloudInitSecret deletes the machine's cloud-init Secret if it is the machine's own (see ownsSecret;
// vmUID is the machine's VM's, when known). Remove calls it when the garbage collector may not take the Secret
// with the VM (after a create that died before the handover, it does not). The delete carries the UID and
// resourceVersion read, so a Secret replaced or handed to another VM since is left alone.
func (d *Driver) deleteCloudInitSecret(ctx context.Context, c kube.Interface, vmUID types.UID) error {
	ns, name := d.namespace(), objects.CloudInitSecretName(d.MachineName)
	secret, err := kube.Get(ctx, c, kube.Secrets, ns, name)
	switch {
	case kube.IsGone(err, "secrets", name):
		return nil
	case err != nil:
		return c.Explain("read Secret", ns+"/"+name, err)
	case !d.ownsSecret(secret, vmUID):
		logging.Debugf("Secret %s/%s is not this machine's; left alone", ns, name)
		return nil
	}
	return deleteSecret(ctx, c, secret)
}

// deleteSecret deletes secret, on the condition that it is still the very object read: its UID, and its
// resourceVersion when set. One changed or gone since is left alone. The preconditions make a retried delete safe.
func deleteSecret(ctx context.Context, c kube.Interface, secret *corev1.Secret) error {
	ns, name := secret.Namespace, secret.Name
	pre := &metav1.Preconditions{UID: &secret.UID}
	if secret.ResourceVersion != "" {
		pre.ResourceVersion = &secret.ResourceVersion
	}
	err := kube.RetryTransient(func() error {
		return kube.Delete(ctx, c, kube.Secrets, ns, name, metav1.DeleteOptions{Preconditions: pre})
	})
	switch {
	case err == nil:
		logging.Debugf("Deleted Secret %s/%s (uid %s)", ns, name, secret.UID)
	case kube.IsGone(err, "secrets", name):
	case apierrors.IsConflict(err):
		logging.Debugf("Secret %s/%s changed since it was read (%v); left alone", ns, name, err)
	default:
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
