package objects

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
)

// Keys KubeVirt reads from a NoCloud Secret (it also accepts userData/networkData; these are Harvester's).
const (
	SecretKeyUserData    = "userdata"
	SecretKeyNetworkData = "networkdata"
)

// MaxSecretData is the most a Secret's data holds, keys and values together: the API server refuses more
// (kubernetes pkg/apis/core/validation, MaxSecretSize, checked by ValidateSecret).
const MaxSecretData = 1 << 20

// CloudInitSecret returns the Secret that carries the VM's rendered cloud-init. It is created before the VM
// and made a dependent of the VM (OwnerReference) once the VM exists, so deleting the VM deletes it. User data
// and network data together must fit MaxSecretData; a problem says how large each is.
func CloudInitSecret(cfg *config.Config, userData, networkData []byte) (*corev1.Secret, error) {
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      CloudInitSecretName(cfg.MachineName),
			Namespace: cfg.Namespace,
			Labels:    map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: cfg.MachineName},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SecretKeyUserData: userData},
	}
	if len(networkData) > 0 {
		s.Data[SecretKeyNetworkData] = networkData
	}
	size := 0
	for k, v := range s.Data {
		size += len(k) + len(v)
	}
	if size > MaxSecretData {
		var p config.Problems
		p.Addf(cfg.UserDataFlag(), "the cloud-init Secret would hold %s (user data %s, network data %s), over the %s a Kubernetes Secret holds; make the user data smaller",
			bounded.FormatSize(int64(size)), bounded.FormatSize(int64(len(userData))), bounded.FormatSize(int64(len(networkData))), bounded.FormatSize(MaxSecretData))
		return nil, p.Err()
	}
	return s, nil
}

// OwnerReference makes an object a dependent of the VM, for garbage collection. blockOwnerDeletion is left
// unset: setting it needs finalizer rights on VMs, which a scoped credential may lack.
func OwnerReference(vm *kubevirtv1.VirtualMachine) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kubevirtv1.GroupVersion.String(),
		Kind:       "VirtualMachine",
		Name:       vm.Name,
		UID:        vm.UID,
	}
}
