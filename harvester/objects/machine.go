package objects

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// Machine is what a create of one machine sends to Harvester, built once from its Config (Build): the
// VirtualMachine with --harvester-vm-patch applied, its disks' claims, and the plan of its static addresses. What
// only the cluster knows is a placeholder until the pre-flight has read it and completed the machine (Complete):
// each image's storage class, the key pairs' keys, what the data Secrets hold; so are the create's draws (the
// claims' suffix, the create's id). The checks of the pre-flight judge the completed machine, and the create
// sends it (Objects), with what only the create learns: its SSH key and cloud-provider kubeconfig go into the
// cloud-init Secret's user data, its allocated addresses onto the VM and into the network data. None of that
// changes a part of the VM a patch may touch (ownedParts): the VM is patched once, here.
type Machine struct {
	// VM is the VirtualMachine as the create sends it, but for its static addresses.
	VM *kubevirtv1.VirtualMachine
	// Claims are its disks' volume claims, in the disks' order, as the VM's volumeClaimTemplates annotation holds
	// them.
	Claims []Claim
	// Addresses is the plan of its static addresses; nil without --harvester-ip-pool.
	Addresses *AddressPlan
	// Lease is the plan of its first NIC's address leased from an IPPool of Harvester's managed DHCP; nil without
	// --harvester-ip-pool-name.
	Lease *LeasePlan

	given *config.Config // as parsed
	cfg   *config.Config // given, with what the data Secrets hold (placeholders until Complete)
	facts Facts
	draw  Draw
	// complete is set by Complete.
	complete bool
}

// Draw is what a create draws at random, once, before its machine is completed: the builders use no randomness.
type Draw struct {
	// ClaimSuffix makes the create's claim names unique (five lowercase letters or digits): a claim left
	// terminating by an earlier VM of the same name never collides with the new one.
	ClaimSuffix string
	// CreateID marks the VM and the cloud-init Secret as this create's (config.AnnotationCreateID).
	CreateID string
}

// Facts are what the machine depends on that only Harvester knows: read by the pre-flight and passed in, so that
// the builders stay pure (no client).
type Facts struct {
	// ImageStorageClasses maps each image an image disk uses to that image's status.storageClassName.
	ImageStorageClasses map[config.Ref]string
	// KeyPairKeys are the public keys of --harvester-key-pair-name, then of --harvester-ssh-keypairs.
	KeyPairKeys []string
	// UserData and NetworkData are what the Secrets of --harvester-user-data-secret and
	// --harvester-network-data-secret hold, read and checked; nil for a flag not given.
	UserData, NetworkData *config.SecretValue
}

// Learned is what only the create learns, as it makes the machine.
type Learned struct {
	// SSHKey is the machine's public key, in authorized_keys form: rancher-machine and Rancher log in with it.
	SSHKey string
	// GuestKubeconfig is the guest cluster's cloud-provider kubeconfig: the one given, or the generated account's.
	GuestKubeconfig []byte
	// Addresses are the static addresses allocated by the plan (Machine.Addresses), IPv4 first.
	Addresses []*StaticAddress
}

// placeholderPVCSuffix stands for the claims' suffix until a create draws it.
const placeholderPVCSuffix = "<random>"

// Build builds the machine of cfg with placeholders for what only the cluster knows and for the create's draws
// (what render shows): the VM is built and --harvester-vm-patch applied to it; a patch that does not apply,
// changes the driver's own parts or reaches beyond the guest is a problem of the flag (patchVM).
func Build(cfg *config.Config) (*Machine, error) {
	m := &Machine{given: cfg, cfg: secretPlaceholders(cfg), Addresses: PlanAddresses(cfg), Lease: PlanLease(cfg), draw: Draw{ClaimSuffix: placeholderPVCSuffix}}
	var p config.Problems
	m.Claims = volumeClaimTemplates(&p, m.cfg, nil, m.draw.ClaimSuffix) // no class known: no image's can differ
	static := m.Addresses != nil || m.Lease != nil                      // the first NIC's MAC address and network data are the driver's
	vm := buildVM(m.cfg, pvcs(m.Claims), len(m.cfg.NetworkData) > 0 || static)
	if m.VM = patchVM(&p, vm, cfg.VMPatch, static); m.VM == nil {
		return nil, p.Err()
	}
	return m, nil
}

// Config is the machine's configuration, with what its data Secrets hold once it is complete.
func (m *Machine) Config() *config.Config { return m.cfg }

// Complete returns the machine completed with facts, which the pre-flight read, and the create's draw: each image
// disk's claim takes its image's storage class (a disk naming another class is a problem of its flag), the claims
// their names, the VM the create's id, the user data and network data what their Secrets hold. The VM is not
// built again: these are the driver's own parts of it, which no patch changed. An image facts lack keeps its
// placeholder (Claim.ClassKnown), and Objects refuses the machine, as it refuses one whose data Secrets facts
// lack.
func (m *Machine) Complete(facts Facts, draw Draw) (*Machine, error) {
	out := *m
	out.facts, out.draw, out.complete = facts, draw, true
	out.cfg = m.given.WithSecretData(facts.UserData, facts.NetworkData)
	var p config.Problems
	out.Claims = volumeClaimTemplates(&p, out.cfg, facts.ImageStorageClasses, draw.ClaimSuffix)
	if err := p.Err(); err != nil {
		return nil, err
	}
	out.VM = m.VM.DeepCopy()
	setClaims(out.VM, out.cfg.Disks, pvcs(out.Claims))
	markCreate(&out.VM.ObjectMeta, draw.CreateID)
	return &out, nil
}

// Incomplete says why the machine cannot be sent yet, or returns "": it is a draft (Build), or the facts it was
// completed with lack an image's storage class or what a data Secret holds.
func (m *Machine) Incomplete() string {
	if !m.complete {
		return "the machine was not completed with what the cluster holds"
	}
	for _, c := range m.Claims {
		if !c.ClassKnown {
			return fmt.Sprintf("the storage class of image %s is not known", c.Disk.Image)
		}
	}
	for _, s := range []struct {
		ref  *config.SecretKeyRef
		read *config.SecretValue
	}{{m.given.UserDataSecret, m.facts.UserData}, {m.given.NetworkDataSecret, m.facts.NetworkData}} {
		if s.ref != nil && s.read == nil {
			return fmt.Sprintf("%s was not read", s.ref)
		}
	}
	return ""
}

// Objects are the cloud-init Secret and the VM the create sends: the Secret's user data with the machine's SSH
// key, the key pairs' and the cloud-provider kubeconfig, its network data with the static addresses or the
// lease's DHCP entry; the VM with the addresses, or the lease's MAC address, on its first NIC. The Secret carries the create's id, as the VM does. Only a complete machine is
// sent.
func (m *Machine) Objects(l Learned) (*corev1.Secret, *kubevirtv1.VirtualMachine, error) {
	if why := m.Incomplete(); why != "" {
		return nil, nil, errors.New("cannot make the machine's objects: " + why)
	}
	network, err := networkData(m.cfg.NetworkData, m.Addresses, l.Addresses)
	if m.Lease != nil {
		network, err = leaseNetworkData(m.cfg.NetworkData, m.LeaseMAC())
	}
	if err != nil {
		return nil, nil, err
	}
	return m.objects(l, network)
}

// objects makes the Secret with network as its network data, and stamps the addresses of l on a copy of the VM.
func (m *Machine) objects(l Learned, network []byte) (*corev1.Secret, *kubevirtv1.VirtualMachine, error) {
	userData, err := UserData(m.cfg, authorizedKeys(l.SSHKey, m.facts.KeyPairKeys), l.GuestKubeconfig)
	if err != nil {
		return nil, nil, err
	}
	secret, err := CloudInitSecret(m.cfg, userData, network)
	if err != nil {
		return nil, nil, err
	}
	markCreate(&secret.ObjectMeta, m.draw.CreateID)
	vm := m.VM.DeepCopy()
	applyStaticAddress(vm, l.Addresses)
	applyLease(vm, m.Lease, m.LeaseMAC())
	return secret, vm, nil
}

// authorizedKeys lists the public keys the guest's SSH user gets: the machine's own (rancher-machine and Rancher
// log in with it), then the key pairs' of the people who log in. A key already listed, whatever its comment, is
// left out.
func authorizedKeys(public string, keyPairs []string) []string {
	keys := []string{}
	seen := map[string]bool{}
	for _, key := range append([]string{public}, keyPairs...) {
		fields := strings.Fields(key) // type, base64 and an optional comment: the first two are the key
		id := strings.Join(fields[:min(2, len(fields))], " ")
		if id != "" && !seen[id] {
			seen[id] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// markCreate writes the create's id on an object the create makes; "" writes nothing (render).
func markCreate(m *metav1.ObjectMeta, id string) {
	if id == "" {
		return
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[config.AnnotationCreateID] = id
}
