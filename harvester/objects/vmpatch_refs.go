package objects

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// A VM patch must not bring into the guest what the pool's editor could not read without it: in Rancher, whoever
// may edit a pool is not whoever may read the Secrets of Harvester's namespaces, yet a volume naming a Secret
// would hand its data — another cluster's join token and cloud-provider kubeconfig in its `<machine>-cloudinit` —
// to the guest, which the editor's cluster runs. So every object of the namespace a patched VM names for its
// guest (ObjectRefs) is refused unless an admin who may write that object in Harvester labelled it
// config.LabelVMPatchAllowed: the pre-flight reads each one (harvester/preflight, vmpatch.go). Sources that name
// no object but reach beyond the guest's own (a host's path, a path of virt-launcher's container, a
// ResourceClaim, a utility volume's claim) are refused outright (beyondGuest); claims are the driver's
// (vmpatch_owned.go); an image a containerDisk or a kernel boot pulls is Harvester's nodes' to fetch, as its
// own images are, but its imagePullSecret is a Secret.

// Kinds of the objects a VM may name for its guest.
const (
	KindSecret         = "Secret"
	KindConfigMap      = "ConfigMap"
	KindServiceAccount = "ServiceAccount"
)

// ObjectRef is an object of the VM's namespace that the VM names for its guest.
type ObjectRef struct {
	Kind string // KindSecret, KindConfigMap or KindServiceAccount
	Name string
	// Path is where the VM names it, e.g. spec.template.spec.volumes[creds].secret.
	Path string
}

// String names the object with where the VM names it: "Secret creds (spec.template.spec.volumes[creds].secret)".
func (r ObjectRef) String() string { return fmt.Sprintf("%s %s (%s)", r.Kind, r.Name, r.Path) }

// AllowCommand is the command an admin runs to let a VM patch give the object to guests.
func (r ObjectRef) AllowCommand(namespace string) string {
	return fmt.Sprintf("kubectl -n %s label %s %s %s=true", namespace, strings.ToLower(r.Kind), r.Name, config.LabelVMPatchAllowed)
}

// references lists every object vm names for its guest, in its template's volumes, access credentials, service
// account and kernel boot, in the order the VM names them. TestReferencesKnowEveryName pins every name a VMI spec
// holds to this list or to why it is none.
func references(vm *kubevirtv1.VirtualMachine) []ObjectRef {
	t := vm.Spec.Template
	if t == nil {
		return nil
	}
	spec := t.Spec
	var refs []ObjectRef
	add := func(kind, name, path string) {
		if name != "" {
			refs = append(refs, ObjectRef{Kind: kind, Name: name, Path: path})
		}
	}
	for _, v := range spec.Volumes {
		refs = append(refs, volumeReferences(v)...)
	}
	for i, c := range spec.AccessCredentials {
		where := fmt.Sprintf("spec.template.spec.accessCredentials[%d]", i)
		if k := c.SSHPublicKey; k != nil && k.Source.Secret != nil {
			add(KindSecret, k.Source.Secret.SecretName, where+".sshPublicKey.source.secret")
		}
		if p := c.UserPassword; p != nil && p.Source.Secret != nil {
			add(KindSecret, p.Source.Secret.SecretName, where+".userPassword.source.secret")
		}
	}
	// virt-launcher's identity: with a containerPath or serviceAccount volume its token reaches the guest.
	add(KindServiceAccount, spec.ServiceAccountName, "spec.template.spec.serviceAccountName")
	if f := spec.Domain.Firmware; f != nil && f.KernelBoot != nil && f.KernelBoot.Container != nil {
		add(KindSecret, f.KernelBoot.Container.ImagePullSecret, "spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret")
	}
	return refs
}

// volumeReferences lists the objects one volume names (claims aside: those are the driver's, see namesClaim).
func volumeReferences(v kubevirtv1.Volume) []ObjectRef {
	var refs []ObjectRef
	where := "spec.template.spec.volumes[" + v.Name + "]."
	add := func(kind, name, path string) {
		if name != "" {
			refs = append(refs, ObjectRef{Kind: kind, Name: name, Path: where + path})
		}
	}
	cloudInit := func(source string, user, network *corev1.LocalObjectReference) {
		if user != nil {
			add(KindSecret, user.Name, source+"secretRef")
		}
		if network != nil {
			add(KindSecret, network.Name, source+"networkDataSecretRef")
		}
	}
	if s := v.Secret; s != nil {
		add(KindSecret, s.SecretName, "secret")
	}
	if c := v.ConfigMap; c != nil {
		add(KindConfigMap, c.Name, "configMap")
	}
	if s := v.ServiceAccount; s != nil {
		add(KindServiceAccount, s.ServiceAccountName, "serviceAccount")
	}
	if s := v.Sysprep; s != nil {
		if s.Secret != nil {
			add(KindSecret, s.Secret.Name, "sysprep.secret")
		}
		if s.ConfigMap != nil {
			add(KindConfigMap, s.ConfigMap.Name, "sysprep.configMap")
		}
	}
	if c := v.ContainerDisk; c != nil {
		add(KindSecret, c.ImagePullSecret, "containerDisk.imagePullSecret")
	}
	if c := v.CloudInitNoCloud; c != nil {
		cloudInit("cloudInitNoCloud.", c.UserDataSecretRef, c.NetworkDataSecretRef)
	}
	if c := v.CloudInitConfigDrive; c != nil {
		cloudInit("cloudInitConfigDrive.", c.UserDataSecretRef, c.NetworkDataSecretRef)
	}
	return refs
}

// ObjectRefs lists the objects of its namespace that vm names for its guest (see references), but the machine's
// cloud-init Secret, which the driver makes: what a VM patch added, since the driver's VM names no other. Each
// object is listed once, where the VM first names it.
func ObjectRefs(vm *kubevirtv1.VirtualMachine) []ObjectRef {
	own := CloudInitSecretName(vm.Name)
	var out []ObjectRef
	for _, r := range references(vm) {
		if r.Kind == KindSecret && r.Name == own {
			continue
		}
		if !slices.ContainsFunc(out, func(o ObjectRef) bool { return o.Kind == r.Kind && o.Name == r.Name }) {
			out = append(out, r)
		}
	}
	return out
}

// beyondGuest names what a VM reaches beyond its guest's own that no object holds or an admin could allow by a
// label: a path of a host (hostDisk), a path of virt-launcher's container (containerPath), a claim mounted into
// virt-launcher (utilityVolumes), devices claimed through dynamic resource allocation (resourceClaims). The VM the
// driver builds has none; a patch may add none.
func beyondGuest(vm *kubevirtv1.VirtualMachine) []string {
	t := vm.Spec.Template
	if t == nil {
		return nil
	}
	var out []string
	for _, v := range t.Spec.Volumes {
		where := "spec.template.spec.volumes[" + v.Name + "]."
		if v.HostDisk != nil {
			out = append(out, where+"hostDisk (a path of the host)")
		}
		if v.ContainerPath != nil {
			out = append(out, where+"containerPath (a path of virt-launcher's container)")
		}
	}
	if len(t.Spec.UtilityVolumes) > 0 {
		out = append(out, "spec.template.spec.utilityVolumes (claims mounted into virt-launcher)")
	}
	if len(t.Spec.ResourceClaims) > 0 {
		out = append(out, "spec.template.spec.resourceClaims (give host devices with --harvester-host-device-info or --harvester-vgpu-info)")
	}
	return out
}
