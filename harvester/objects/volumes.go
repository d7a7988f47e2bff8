package objects

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// claimName names the PVC of a disk: <vm>-<disk>-<suffix>. The suffix is new on every create, so a claim left
// terminating by an earlier VM of the same name never collides with the new one.
func claimName(vmName, diskName, suffix string) string {
	return vmName + "-" + diskName + "-" + suffix
}

// volumeClaimTemplates are the PVCs Harvester creates for the VM's disks, from the VM's
// harvesterhci.io/volumeClaimTemplates annotation. Image disks are cloned from the image and must use the
// image's own storage class (Harvester serves the image through it); blank disks use the class the user named.
func volumeClaimTemplates(cfg *config.Config, facts Facts, suffix string) ([]corev1.PersistentVolumeClaim, error) {
	claims := make([]corev1.PersistentVolumeClaim, 0, len(cfg.Disks))
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
		class := d.StorageClass
		if d.Image != nil {
			imageClass, ok := facts.ImageStorageClasses[*d.Image]
			if !ok {
				return nil, fmt.Errorf("storage class of image %s is not known", d.Image)
			}
			if class != "" && class != imageClass {
				return nil, fmt.Errorf("%s: storage class %q differs from the class of its image %s (%q); image disks must use the image's class", d.Name, class, d.Image, imageClass)
			}
			class = imageClass
			pvc.Annotations = map[string]string{config.AnnotationImageID: d.Image.String()}
		}
		pvc.Spec.StorageClassName = ptr.To(class)
		claims = append(claims, pvc)
	}
	return claims, nil
}

// marshalClaims renders the claims the way Harvester's volumeClaimTemplates annotation carries them (without
// encoding/json's HTML escaping, which only obscures the annotation).
func marshalClaims(claims []corev1.PersistentVolumeClaim) (string, error) {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(claims); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
