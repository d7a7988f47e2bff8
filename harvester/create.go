package harvester

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// rollbackTimeout bounds the cleanup after a failed create: removing the VM waits for it to be gone.
const rollbackTimeout = 5 * time.Minute

// Create makes the machine: its static address when it has a pool (see harvester/ippool), the cloud-init Secret,
// then the VirtualMachine, then hands the Secret to the VM (ownerReference) so deleting the VM deletes it; then
// waits, by watch, until the VM runs and reports an IP.
// It is transactional: when anything fails — an API error, a state KubeVirt will not leave, the timeout — it
// removes what it made (the VM with its volumes, the Secret, the address) before returning, and the error carries both the
// cause and any cleanup failure. rancher-machine does not save the machine after a failed create, so nothing
// else would ever clean up (harvester/harvester#1246). The rollback deletes objects by the UIDs this create
// got back, never by name alone: a create of the same name running beside it keeps what it made.
//
// rancher-machine saves the machine's state before Create (after PreCreateCheck) and again only after a
// successful Create: the VM's UID goes into d.VMUID the moment the VM exists, so the second save records it;
// the create id (d.CreateID, on the VM and the Secret) is in the first. It sends the machine's objects as the
// pre-flight judged them (Driver.checked), with what only it learns: its SSH key and the cloud-provider
// account's kubeconfig in the user data, the allocated address on the VM and in the network data.
func (d *Driver) Create() (err error) {
	defer d.named(&err)
	if d.cfg == nil {
		return errNoConfig
	}
	cfg := d.cfg
	if d.checked == nil { // rancher-machine runs PreCreateCheck first, in the same process
		if err := d.preCreateCheck(); err != nil {
			return err
		}
	}
	machine := d.checked
	ctx, cancel := context.WithTimeout(context.Background(), cfg.CreateTimeout)
	defer cancel()
	c, err := d.api()
	if err != nil {
		return err
	}
	if warning := connection.ExpiryWarning(d.credentialExpiry(ctx), time.Now()); warning != "" {
		logging.Infof("%s", d.id.Text(warning))
	}
	public, err := d.prepareSSHKey()
	if err != nil {
		return err
	}
	guestKubeconfig, err := d.guestKubeconfig(ctx, c)
	if err != nil {
		return err
	}
	made := &created{}
	if made.addresses, err = ippool.Allocate(ctx, c, machine.Addresses, d.CreateID); err != nil {
		return d.rollBack(c, made, err) // the IPv4 address of a dual-stack pool, when the IPv6 one failed
	}
	learned := objects.Learned{SSHKey: public, GuestKubeconfig: guestKubeconfig}
	for _, a := range made.addresses {
		learned.Addresses = append(learned.Addresses, a.Static)
	}
	secret, vm, err := machine.Objects(learned) // what the pre-flight judged, with what only the create learns
	if err == nil {
		cpus, memory, disks := vmSize(vm)
		logging.Infof("Creating VM %s/%s on Harvester (%s CPUs, %s memory, %d disks)", vm.Namespace, vm.Name, cpus, memory, disks)
		err = d.createObjects(ctx, c, secret, vm, made)
	}
	if err == nil && machine.Lease != nil {
		err = d.takeLease(ctx, c, made, machine.LeaseMAC()) // --harvester-ip-pool-name: leased once the VM exists (create_lease.go)
	}
	if err == nil {
		err = d.waitUntilReady(ctx, c, cfg.CreateTimeout)
	}
	if err != nil {
		return d.rollBack(c, made, err)
	}
	return nil
}

// vmSize is what a VM is made of, for the create's line: its CPU and memory limits as the VM holds them (the
// flags', or --harvester-vm-patch's), and its disks but the cloud-init disk.
func vmSize(vm *kubevirtv1.VirtualMachine) (cpus, memory string, disks int) {
	limits := vm.Spec.Template.Spec.Domain.Resources.Limits
	cpu, mem := limits[corev1.ResourceCPU], limits[corev1.ResourceMemory]
	return cpu.String(), mem.String(), len(vm.Spec.Template.Spec.Domain.Devices.Disks) - 1
}

// guestKubeconfig returns the cloud provider kubeconfig the guest gets: the given one, or the generated
// account's. The account belongs to the guest cluster, not to this machine: a failed create or a remove keeps it.
func (d *Driver) guestKubeconfig(ctx context.Context, c kube.Interface) ([]byte, error) {
	cp := d.cfg.CloudProvider
	if !cp.Generate {
		return cp.Kubeconfig, nil
	}
	acct := guestaccount.Account{Namespace: d.cfg.Namespace, Cluster: d.cfg.ClusterName, Server: cp.Server}
	logging.Infof("Preparing the cloud provider account %s/%s of guest cluster %s", acct.Namespace, acct.Name(), acct.Cluster)
	kubeconfig, err := guestaccount.Ensure(ctx, c, acct)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", config.FlagGenerateCloudProviderConfig, err)
	}
	return kubeconfig, nil
}

// created records what a create has made so far, for the rollback.
type created struct {
	addresses []*ippool.Allocation // from --harvester-ip-pool: one, or two for a dual-stack pool
	secret    *corev1.Secret       // as created
	vm        *kubevirtv1.VirtualMachine
	// The Secret's or the VM's create failed in a way that may have made it all the same (kube.MayHaveApplied):
	// its answer was lost. The rollback looks for it by the create's id.
	secretUnanswered, vmUnanswered bool
	// removedVM is the UID of the VM the rollback removed, whose lease of Harvester's managed DHCP it then waits
	// to see released (--harvester-ip-pool-name); "" when it removed none.
	removedVM types.UID
}

// empty reports whether the create has made nothing that the rollback must look for.
func (m *created) empty() bool {
	return m.vm == nil && m.secret == nil && len(m.addresses) == 0 && !m.secretUnanswered && !m.vmUnanswered
}

// createAccess is what createObjects needs.
var createAccess = []kube.Access{
	{Resource: "secrets", Verb: "create"},
	{Resource: "secrets", Verb: "patch"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "create"},
}

// createObjects sends the Secret and the VM and links them. The Secret goes first so the VM never exists
// without its cloud-init; it gets its owner once the VM (and its UID) exists. Both are create-only and carry the
// create's id (objects.Draw): an existing object of either name is not touched, and the create fails.
func (d *Driver) createObjects(ctx context.Context, c kube.Interface, secret *corev1.Secret, vm *kubevirtv1.VirtualMachine, made *created) error {
	ns := d.cfg.Namespace
	got, err := kube.Create(ctx, c, kube.Secrets, ns, secret)
	if apierrors.IsAlreadyExists(err) {
		return secretExists(ctx, c, ns, secret.Name, d.MachineName)
	}
	if err != nil {
		made.secretUnanswered = kube.MayHaveApplied(err)
		return c.Explain("create cloud-init Secret", ns+"/"+secret.Name, err)
	}
	made.secret = got
	logging.Debugf("Created Secret %s/%s (uid %s)", ns, secret.Name, got.UID)

	gotVM, err := c.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		made.vmUnanswered = kube.MayHaveApplied(err)
		return c.Explain("create VirtualMachine", ns+"/"+vm.Name, err)
	}
	made.vm = gotVM
	d.VMUID = string(gotVM.UID)
	logging.Debugf("Created VirtualMachine %s/%s (uid %s)", ns, vm.Name, gotVM.UID)

	// The patch carries the Secret's UID, which the API server refuses to change: it lands on this Secret only.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": got.UID, "ownerReferences": []metav1.OwnerReference{objects.OwnerReference(gotVM)}}})
	if err := kube.MergePatch(ctx, c, kube.Secrets, ns, secret.Name, patch); err != nil {
		return c.Explain("hand the cloud-init Secret to its VM", ns+"/"+secret.Name, err)
	}
	return ippool.RecordVM(ctx, c, made.addresses, gotVM)
}

// secretExists says why a create cannot use its cloud-init Secret's name: the Secret exists. It is never
// overwritten nor deleted here, even when it looks like a leftover of this driver (its labels for this machine
// name, no owner): a create of the same name running beside this one makes exactly such a Secret before its VM
// exists, and it cannot be told from a leftover of a create that died — by age neither, since a create may take
// as long as its --harvester-create-timeout, which this process does not know of another. Replacing it would boot
// the other create's VM with this one's user data and SSH key; deleting it would take its cloud-init away. So the
// user, who knows whether another create runs, deletes it; rm of the machine whose create died also does.
func secretExists(ctx context.Context, c kube.Interface, ns, name, machine string) error {
	old, err := kube.Get(ctx, c, kube.Secrets, ns, name)
	switch {
	case kube.IsGone(err, "secrets", name):
		return fmt.Errorf("cloud-init Secret %s/%s existed when this create made its own and is gone now: another create or remove of machine %s is at work; try again", ns, name, machine)
	case err != nil:
		return c.Explain("read the existing cloud-init Secret", ns+"/"+name, err)
	}
	return errors.New(preflight.SecretInTheWay(ns, name, machine, old))
}

// rollBack removes what a failed create made and returns the create's error, joined with what it could not
// remove. It acts on the objects this create made and no others: those whose answer arrived by their UIDs, those
// whose answer was lost (created.vmUnanswered, secretUnanswered) by the create's id on the object of their name —
// the API server may have carried out a request whose answer never came back. Each request is retried on
// transient failures as rm's are (kube.RetryTransient), and what is left all the same is named object by object.
//
// It forgets the VM's UID (d.VMUID): rancher-machine does not save a machine whose Create failed, so its store keeps
// the state of before Create, and a Remove in this process must see what a Remove in a later one sees. With VMUID
// set, Remove would take the machine for a finished create whose Secret its VM owns; a VM left behind here may
// have been made before the handover, so Remove finds it by the create id and reads its Secret.
func (d *Driver) rollBack(c kube.Interface, made *created, cause error) error {
	d.VMUID = ""
	if made.empty() {
		return cause
	}
	logging.Infof("Create failed; removing what it made: %v", d.id.Err(cause))
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	var left []string // what could not be removed, and why
	vmLeft := false
	if made.vm != nil || made.vmUnanswered {
		if l := d.removeMadeVM(ctx, c, made); l != "" {
			left, vmLeft = append(left, l), true
		}
	}
	// The Secret and the addresses go only once the VM has: a VM left behind keeps its cloud-init and its address,
	// and rm removes them with it.
	const kept = "kept while the VM may exist"
	if made.secret != nil || made.secretUnanswered {
		if vmLeft {
			left = append(left, madeSecretName(d, made)+" ("+kept+")")
		} else if l := d.removeMadeSecret(ctx, c, made); l != "" {
			left = append(left, l)
		}
	}
	if l := d.leaseLeft(ctx, c, made); l != "" {
		left = append(left, l)
	}
	for _, a := range made.addresses {
		what := fmt.Sprintf("address allocation %s (%s)", a.Static.Allocation, a.Static.Address.Addr())
		if vmLeft {
			left = append(left, what+" ("+kept+")")
		} else if err := ippool.Release(ctx, c, a.Static.Allocation, a.UID, d.machine()); err != nil {
			left = append(left, what+" ("+err.Error()+")")
		}
	}
	if len(left) == 0 {
		return cause
	}
	return fmt.Errorf("%w\nthe cleanup after it also failed and left in Harvester: %s. Removing the machine (rancher-machine rm %s; in Rancher, deleting it) "+
		"removes them once Harvester answers", cause, strings.Join(left, "; "), d.MachineName)
}

// removeMadeVM removes the VM this create made: the one whose answer arrived, by its UID, or else the VM of its
// name that carries this create's id. A VM of the same name made by someone else is left alone.
// It returns what it could not remove, and why, or "".
func (d *Driver) removeMadeVM(ctx context.Context, c kube.Interface, made *created) string {
	ns, name := d.namespace(), d.MachineName
	vm, err := readMade(func() (*kubevirtv1.VirtualMachine, error) {
		return c.VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	}, "virtualmachines", name)
	if err != nil {
		what := "VM " + ns + "/" + name + ", which the create's lost answer may have made"
		if made.vm != nil {
			what = vmAndVolumes(made.vm)
		}
		return what + " (" + c.Explain("read VM", ns+"/"+name, err).Error() + ")"
	}
	switch {
	case vm == nil:
		logging.Debugf("VM %s/%s of this create is already gone", ns, name)
		return ""
	case made.vm != nil && vm.UID != made.vm.UID, made.vm == nil && vm.Annotations[config.AnnotationCreateID] != d.CreateID:
		logging.Debugf("VM %s/%s (uid %s) is not this create's; left alone", ns, name, vm.UID)
		return ""
	case made.vm == nil:
		logging.Infof("The answer to the VM's create was lost, but the API server made it: VM %s/%s (uid %s, create id %s)", ns, name, vm.UID, d.CreateID)
	}
	if err := d.removeVM(ctx, c, vm, vm.Annotations[config.AnnotationRemoveAllPVCs] == "true"); err != nil {
		return vmAndVolumes(vm) + " (" + err.Error() + ")"
	}
	made.removedVM = vm.UID
	return ""
}

// vmAndVolumes names a VM and the volumes removing it removes.
func vmAndVolumes(vm *kubevirtv1.VirtualMachine) string {
	s := fmt.Sprintf("VM %s/%s (uid %s)", vm.Namespace, vm.Name, vm.UID)
	if claims := vmClaims(vm, false); len(claims) > 0 {
		s += " with its volumes " + strings.Join(claims, ", ")
	}
	return s
}

// removeMadeSecret deletes the cloud-init Secret this create made: the one whose answer arrived, by its UID (its
// resourceVersion changed when the VM became its owner), or else the Secret of its name that carries this
// create's id. The garbage collector may have deleted it with the VM already. It returns what it could not
// remove, and why, or "".
func (d *Driver) removeMadeSecret(ctx context.Context, c kube.Interface, made *created) string {
	ns, name := d.namespace(), objects.CloudInitSecretName(d.MachineName)
	s := made.secret
	if s == nil {
		found, err := readMade(func() (*corev1.Secret, error) { return kube.Get(ctx, c, kube.Secrets, ns, name) }, "secrets", name)
		switch {
		case err != nil:
			return madeSecretName(d, made) + " (" + c.Explain("read Secret", ns+"/"+name, err).Error() + ")"
		case found == nil || found.Annotations[config.AnnotationCreateID] != d.CreateID:
			return ""
		}
		s = found
	}
	s = s.DeepCopy()
	s.ResourceVersion = ""
	if err := deleteSecret(ctx, c, s); err != nil {
		return fmt.Sprintf("Secret %s/%s (uid %s) (%v)", ns, name, s.UID, err)
	}
	return ""
}

// madeSecretName names the cloud-init Secret a create made, or whose create's answer was lost.
func madeSecretName(d *Driver, made *created) string {
	ns, name := d.namespace(), objects.CloudInitSecretName(d.MachineName)
	if made.secret == nil {
		return "Secret " + ns + "/" + name + ", which the create's lost answer may have made"
	}
	return fmt.Sprintf("Secret %s/%s (uid %s)", ns, name, made.secret.UID)
}

// readMade reads an object a create made with get, retrying transient failures; nil when there is none.
func readMade[T any](get func() (*T, error), resource, name string) (*T, error) {
	var obj *T
	err := kube.RetryTransient(func() (err error) {
		obj, err = get()
		return err
	})
	if kube.IsGone(err, resource, name) {
		return nil, nil
	}
	return obj, err
}

// randomSuffix returns five random lowercase letters or digits, for claim names.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789" // no vowels: no words by accident
	b := make([]byte, 5)
	rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
