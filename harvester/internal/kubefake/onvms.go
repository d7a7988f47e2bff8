package kubefake

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// OnVMs runs handle on every event of a VM in any namespace, one at a time, until the test ends, as a controller
// of the fake would (the imitations of KubeVirt's VM controller and of Harvester's managed DHCP). deleted says the
// VM is gone.
func (fc *Cluster) OnVMs(handle func(ctx context.Context, vm *kubevirtv1.VirtualMachine, deleted bool)) {
	fc.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fc.T.Cleanup(cancel)
	w, err := fc.KV.KubevirtV1().VirtualMachines(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
	fc.OK(nil, err)
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if vm, isVM := ev.Object.(*kubevirtv1.VirtualMachine); isVM {
					handle(ctx, vm, ev.Type == watch.Deleted)
				}
			}
		}
	}()
}
