package harvester

import (
	"context"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// The pre-flight's host devices check gives the PCI classes of Harvester's PCIDevices by resource name, for check's
// autoscaling annotations; not knowing them (a credential that may not list pcidevices) is no error, and without
// host devices nothing is read.
func TestPreflightGivesPCIClasses(t *testing.T) {
	fc := newFakeCluster(t)
	for name, dev := range map[string][2]string{"node1-001f6": {nicResource, "0200"}, "node1-01000": {kubefake.GPUResource, "0302"}} {
		pci := &kube.PCIDevice{ObjectMeta: metav1.ObjectMeta{Name: name}}
		pci.Status.NodeName, pci.Status.ResourceName, pci.Status.ClassID = "node1", dev[0], dev[1]
		fc.OK(kube.Create(context.Background(), fc.C, kube.PCIDevices, "", pci))
	}
	opts := configtest.With(configtest.MinimalOptions(), config.FlagHostDeviceInfo, `{"hostDevices":[{"name":"gpu1","deviceName":"`+kubefake.GPUResource+`"}]}`)
	classes := func(opts config.Options) map[string]string {
		return newTestDriver(t, fc, "m1", opts).preflight(context.Background(), nil).PCIClasses
	}
	if got := classes(opts); !reflect.DeepEqual(got, map[string]string{kubefake.GPUResource: "0302", nicResource: "0200"}) {
		t.Errorf("classes %v", got)
	}
	if got := classes(configtest.MinimalOptions()); got != nil {
		t.Errorf("without host devices: %v", got)
	}
	fc.Dyn.PrependReactor("list", "pcidevices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "devices.harvesterhci.io", Resource: "pcidevices"}, "", nil)
	})
	if got := classes(opts); got != nil {
		t.Errorf("forbidden: %v", got)
	}
}
