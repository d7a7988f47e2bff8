package objects

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// claimName names the PVC of a disk: <vm>-<disk>-<suffix>. The suffix is new on every create, so a claim left
// terminating by an earlier VM of the same name never collides with the new one.
func claimName(vmName, diskName, suffix string) string {
	return vmName + "-" + diskName + "-" + suffix
}

// Claim is one disk's volume claim, as Harvester makes it from the VM's volumeClaimTemplates annotation. No VM
// patch changes that annotation or the volumes that name claims: they are the driver's (ownedParts).
type Claim struct {
	Disk config.Disk
	PVC  corev1.PersistentVolumeClaim
	// ClassKnown is false for an image disk whose image's storage class is not known: a draft's (Build), or one
	// the pre-flight could not read. Its PVC names a placeholder class.
	ClassKnown bool
}

// Class is the claim's storage class: the image's for an image disk, else the one the disk names ("" for the
// cluster's default).
func (c Claim) Class() string { return ptr.Deref(c.PVC.Spec.StorageClassName, "") }

// volumeClaimTemplates are the PVCs Harvester creates for the VM's disks, from the VM's
// harvesterhci.io/volumeClaimTemplates annotation, named with suffix. Image disks are cloned from the image and
// must use the image's own storage class (Harvester serves the image through it), from classes (a placeholder
// when classes lacks the image); blank disks use the class the user named. A disk naming another class than its
// image's is a problem of its flag.
func volumeClaimTemplates(p *config.Problems, cfg *config.Config, classes map[config.Ref]string, suffix string) []Claim {
	claims := make([]Claim, 0, len(cfg.Disks))
	for _, d := range cfg.Disks {
		pvc := corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claimName(cfg.MachineName, d.Name, suffix)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{d.AccessMode},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: *resource.NewQuantity(int64(d.SizeGiB)<<30, resource.BinarySI),
				}},
				VolumeMode: ptr.To(d.VolumeMode),
			},
		}
		class, known := d.StorageClass, true
		if d.Image != nil {
			imageClass, ok := classes[*d.Image]
			switch {
			case !ok:
				class, known = classPlaceholder(*d.Image), false
			case class != "" && class != imageClass:
				p.Addf(d.Flag, "%s: storage class %q differs from the class of its image %s (%q); image disks must use the image's class", d.Name, class, d.Image, imageClass)
			default:
				class = imageClass
			}
			pvc.Annotations = map[string]string{config.AnnotationImageID: d.Image.String()}
		}
		pvc.Spec.StorageClassName = ptr.To(class)
		claims = append(claims, Claim{Disk: d, PVC: pvc, ClassKnown: known})
	}
	return claims
}

// setClaims writes claims into vm: its volumeClaimTemplates annotation, and each disk's volume's claim name.
func setClaims(vm *kubevirtv1.VirtualMachine, disks []config.Disk, claims []corev1.PersistentVolumeClaim) {
	if vm.Annotations == nil {
		vm.Annotations = map[string]string{}
	}
	vm.Annotations[config.AnnotationVolumeClaimTemplates] = marshalClaims(claims)
	for i, d := range disks {
		for _, v := range vm.Spec.Template.Spec.Volumes {
			if v.Name == d.Name && v.PersistentVolumeClaim != nil {
				v.PersistentVolumeClaim.ClaimName = claims[i].Name
			}
		}
	}
}

// pvcs are the claims' PVCs.
func pvcs(claims []Claim) []corev1.PersistentVolumeClaim {
	out := make([]corev1.PersistentVolumeClaim, len(claims))
	for i, c := range claims {
		out[i] = c.PVC
	}
	return out
}

// marshalClaims renders the claims the way Harvester's volumeClaimTemplates annotation carries them (without
// encoding/json's HTML escaping, which only obscures the annotation). API types always encode.
func marshalClaims(claims []corev1.PersistentVolumeClaim) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(claims)
	return strings.TrimSuffix(buf.String(), "\n")
}
