package harvester

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// PCIClasses are the PCI classes of the PCI devices Harvester's pcidevices-controller found, by resource name
// (status.classId, "0302"; a resource name the hosts give devices of several classes maps to the first one
// listed): what tells a passed-through GPU from another device, for check's autoscaling annotations
// (autoscale.Inputs). One list from the API server's watch cache, with the credential of the flags and
// environment in opts. Nil, and no error, when it cannot be known: no host devices asked for, the add-on not
// enabled, or a credential that may not list pcidevices; an error for any other failure.
func PCIClasses(ctx context.Context, machineName string, opts config.Options) (map[string]string, error) {
	d := NewDriver(machineName, "")
	if err := d.SetConfigFromFlags(opts); err != nil {
		return nil, nil // the pre-flight has told the flags' problems
	}
	return d.pciClasses(ctx)
}

// pciClasses is PCIClasses with the driver's configuration and client.
func (d *Driver) pciClasses(ctx context.Context) (map[string]string, error) {
	if len(d.cfg.HostDevices) == 0 {
		return nil, nil
	}
	c, err := d.api()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	devices, err := kube.List(ctx, c, kube.PCIDevices, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	classes := map[string]string{}
	for _, dev := range devices {
		if _, seen := classes[dev.Status.ResourceName]; !seen {
			classes[dev.Status.ResourceName] = dev.Status.ClassID
		}
	}
	return classes, nil
}
