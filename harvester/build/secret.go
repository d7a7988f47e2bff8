package build

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// Keys KubeVirt reads from a NoCloud Secret (it also accepts userData/networkData; these are Harvester's).
const (
	SecretKeyUserData    = "userdata"
	SecretKeyNetworkData = "networkdata"
)

// BuildCloudInitSecret returns the Secret that carries the VM's rendered cloud-init. It is created before the VM
// and made a dependent of the VM (vmOwnerReference) once the VM exists, so deleting the VM deletes it.
func CloudInitSecret(cfg *config.Config, userData, networkData []byte) *corev1.Secret {
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
	return s
}

// vmOwnerReference makes an object a dependent of the VM, for garbage collection. blockOwnerDeletion is left
// unset: setting it needs finalizer rights on VMs, which a scoped credential may lack.
func OwnerReference(vm *kubevirtv1.VirtualMachine) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kubevirtv1.GroupVersion.String(),
		Kind:       "VirtualMachine",
		Name:       vm.Name,
		UID:        vm.UID,
	}
}
