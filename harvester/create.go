package harvester

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/build"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// rollbackTimeout bounds the cleanup after a failed create: removing the VM waits for it to be gone.
const rollbackTimeout = 5 * time.Minute

// Create makes the machine: its static address when it has a pool (see harvester/internal/ippool), the cloud-init Secret,
// then the VirtualMachine, then hands the Secret to the VM (ownerReference) so deleting the VM deletes it; then
// waits, by watch, until the VM runs and reports an IP.
// It is transactional: when anything fails — an API error, a state KubeVirt will not leave, the timeout — it
// removes what it made (the VM with its volumes, the Secret, the address) before returning, and the error carries both the
// cause and any cleanup failure. rancher-machine does not save the machine after a failed create, so nothing
// else would ever clean up (harvester/harvester#1246).
func (d *Driver) Create() error {
	if d.cfg == nil {
		return errNoConfig
	}
	cfg := d.cfg
	ctx, cancel := context.WithTimeout(context.Background(), cfg.CreateTimeout)
	defer cancel()
	c, err := d.api()
	if err != nil {
		return err
	}
	if warning := expiryWarning(d.credentialExpiry, time.Now()); warning != "" {
		logging.Infof("%s", warning)
	}
	looked, err := d.lookUp(ctx, c)
	if err != nil {
		return err
	}
	public, err := d.prepareSSHKey()
	if err != nil {
		return err
	}
	keys := authorizedKeys(public, looked)
	guestKubeconfig, err := d.guestKubeconfig(ctx, c)
	if err != nil {
		return err
	}
	userData, err := build.UserData(cfg, keys, guestKubeconfig)
	if err != nil {
		return err
	}
	made := &created{}
	facts := looked.facts
	if made.address, err = ippool.Allocate(ctx, c, cfg); err != nil {
		return err
	}
	if made.address != nil {
		facts.StaticAddress = made.address.Static
	}
	secret, vm, err := buildObjects(cfg, facts, userData)
	if err == nil {
		logging.Infof("Creating VM %s/%s on Harvester (%d CPUs, %d GiB memory, %d disks)", cfg.Namespace, cfg.MachineName, cfg.CPUs, cfg.MemoryGiB, len(cfg.Disks))
		err = d.createObjects(ctx, c, secret, vm, made)
	}
	if err == nil {
		err = d.waitUntilReady(ctx, c, cfg.CreateTimeout)
	}
	if err != nil {
		return d.rollBack(c, made, err)
	}
	return nil
}

// authorizedKeys lists the public keys the guest's SSH user gets: the driver's own (rancher-machine and Rancher log
// in with it), the --harvester-key-pair-name key, then the --harvester-ssh-keypairs keys of the people who log in.
// A key already listed, whatever its comment, is left out.
func authorizedKeys(public string, looked *lookups) []string {
	keys := []string{}
	seen := map[string]bool{}
	for _, key := range slices.Concat([]string{public, looked.keyPairKey}, looked.extraKeys) {
		fields := strings.Fields(key) // type, base64 and an optional comment: the first two are the key
		id := strings.Join(fields[:min(2, len(fields))], " ")
		if id != "" && !seen[id] {
			seen[id] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// buildObjects builds the cloud-init Secret and the VM of a create.
func buildObjects(cfg *config.Config, facts build.Facts, userData []byte) (*corev1.Secret, *kubevirtv1.VirtualMachine, error) {
	network, err := build.NetworkData(cfg, facts)
	if err != nil {
		return nil, nil, err
	}
	vm, err := build.VirtualMachine(cfg, facts, randomSuffix())
	if err != nil {
		return nil, nil, err
	}
	return build.CloudInitSecret(cfg, userData, network), vm, nil
}

// guestKubeconfig returns the cloud provider kubeconfig the guest gets: the given one, or the generated
// account's. The account belongs to the guest cluster, not to this machine: a failed create or a remove keeps it.
func (d *Driver) guestKubeconfig(ctx context.Context, c kube.Interface) ([]byte, error) {
	cp := d.cfg.CloudProvider
	if !cp.Generate {
		return cp.Kubeconfig, nil
	}
	logging.Infof("Preparing the cloud provider account %s/%s of guest cluster %s", d.cfg.Namespace, d.cfg.ClusterName, d.cfg.ClusterName)
	kubeconfig, err := ensureCloudProviderAccount(ctx, c, CloudProviderAccount{Namespace: d.cfg.Namespace, ServiceAccount: d.cfg.ClusterName, Server: cp.Server})
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", config.FlagGenerateCloudProviderConfig, err)
	}
	return kubeconfig, nil
}

// created records what a create has made so far, for the rollback.
type created struct {
	address *ippool.Allocation // from --harvester-ip-pool
	secret  bool
	vm      *kubevirtv1.VirtualMachine
}

// createAccess is what createObjects needs.
var createAccess = []kube.Access{
	{Resource: "secrets", Verb: "create"},
	{Resource: "secrets", Verb: "patch"},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "create"},
}

// createObjects sends the Secret and the VM and links them. The Secret goes first so the VM never exists
// without its cloud-init; it gets its owner once the VM (and its UID) exists.
func (d *Driver) createObjects(ctx context.Context, c kube.Interface, secret *corev1.Secret, vm *kubevirtv1.VirtualMachine, made *created) error {
	ns := d.cfg.Namespace
	_, err := kube.Create(ctx, c, kube.Secrets, ns, secret)
	if apierrors.IsAlreadyExists(err) {
		err = replaceStaleSecret(ctx, c, secret)
	}
	if err != nil {
		return c.Explain("create cloud-init Secret", ns+"/"+secret.Name, err)
	}
	made.secret = true
	logging.Debugf("Created Secret %s/%s", ns, secret.Name)

	got, err := c.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		return c.Explain("create VirtualMachine", ns+"/"+vm.Name, err)
	}
	made.vm = got
	logging.Debugf("Created VirtualMachine %s/%s (uid %s)", ns, vm.Name, got.UID)

	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{build.OwnerReference(got)}}})
	if err := kube.MergePatch(ctx, c, kube.Secrets, ns, secret.Name, patch); err != nil {
		return c.Explain("hand the cloud-init Secret to its VM", ns+"/"+secret.Name, err)
	}
	return ippool.RecordVM(ctx, c, made.address, got)
}

// replaceStaleSecret overwrites the cloud-init Secret a killed create left behind, and nothing else.
func replaceStaleSecret(ctx context.Context, c kube.Interface, secret *corev1.Secret) error {
	old, err := kube.Get(ctx, c, kube.Secrets, secret.Namespace, secret.Name)
	if err != nil {
		return err
	}
	if !isStaleCloudInitSecret(old.Labels, old.OwnerReferences, secret.Labels[config.LabelVMName]) {
		return fmt.Errorf("a Secret named %s already exists and is not a leftover of this driver", secret.Name)
	}
	fresh := secret.DeepCopy()
	fresh.ResourceVersion = old.ResourceVersion
	_, err = kube.Update(ctx, c, kube.Secrets, secret.Namespace, fresh)
	return err
}

// rollBack removes what a failed create made and returns the create's error, joined with any cleanup failure.
func (d *Driver) rollBack(c kube.Interface, made *created, cause error) error {
	if made.vm == nil && !made.secret && made.address == nil {
		return cause
	}
	logging.Infof("Create failed; removing what it made: %v", cause)
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	var cleanup error
	if made.vm != nil {
		cleanup = d.removeVM(ctx, c, made.vm.UID)
	}
	if made.secret {
		cleanup = errors.Join(cleanup, d.deleteCloudInitSecret(ctx, c))
	}
	if a := made.address; a != nil && cleanup == nil { // the address goes only once its VM has
		cleanup = ippool.Release(ctx, c, a.Static.Allocation, a.UID, d.machine())
	}
	if cleanup != nil {
		return fmt.Errorf("%w\nthe cleanup after it also failed, so objects may be left in Harvester namespace %s: %v", cause, d.cfg.Namespace, cleanup)
	}
	return cause
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
