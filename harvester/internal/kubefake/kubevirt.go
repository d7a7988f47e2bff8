package kubefake

import (
	kvfake "kubevirt.io/client-go/kubevirt/fake"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// kubevirtFake is KubeVirt's generated fake clientset seen as the driver's client of VMs and VMIs
// (kube.KubevirtInterface): its clients have every method of the driver's, with the same signatures, and more.
type kubevirtFake struct{ cs *kvfake.Clientset }

func (f kubevirtFake) VirtualMachines(ns string) kube.VirtualMachineInterface {
	return f.cs.KubevirtV1().VirtualMachines(ns)
}

func (f kubevirtFake) VirtualMachineInstances(ns string) kube.VirtualMachineInstanceInterface {
	return f.cs.KubevirtV1().VirtualMachineInstances(ns)
}
