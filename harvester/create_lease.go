package harvester

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
)

// leaseReleaseTimeout bounds the wait, once a machine's VM is gone, for Harvester's managed DHCP to release its
// lease: garbage collection deletes the VM's VirtualMachineNetworkConfig and the vm-dhcp-controller frees the
// address, which takes moments when the add-on runs.
var leaseReleaseTimeout = 2 * time.Minute // a variable for tests

// takeLease waits until Harvester's managed DHCP has leased the first NIC of the VM this create made, of MAC
// address mac, an address (--harvester-ip-pool-name), and pins the lease to it (see harvester/iplease). The lease is the controller's:
// the rollback removes the VM, and with it the lease.
func (d *Driver) takeLease(ctx context.Context, c kube.Interface, made *created, mac string) error {
	addr, err := iplease.AwaitLease(ctx, c, made.vm, mac)
	if err != nil {
		return err
	}
	return iplease.Pin(ctx, c, made.vm, addr)
}

// leaseLeft waits, after a failed create removed its VM, until that VM's lease is released, and returns what is
// left if it is not ("" when released, or when the machine has no lease or no VM was removed).
func (d *Driver) leaseLeft(ctx context.Context, c kube.Interface, made *created) string {
	if d.IPLeasePool == "" || made.removedVM == "" {
		return ""
	}
	if err := d.awaitLeaseRelease(ctx, c, made.removedVM); err != nil {
		return "the lease of IPPool " + d.IPLeasePool + " (" + err.Error() + ")"
	}
	return ""
}

// awaitLeaseRelease waits, once the machine's VM of UID vmUID is gone, until Harvester's managed DHCP has released
// its lease (--harvester-ip-pool-name; nothing to wait for without one). The driver releases nothing itself: the
// vm-dhcp-controller does, when the VM goes (iplease.AwaitRelease).
func (d *Driver) awaitLeaseRelease(ctx context.Context, c kube.Interface, vmUID types.UID) error {
	if d.IPLeasePool == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, leaseReleaseTimeout)
	defer cancel()
	return iplease.AwaitRelease(ctx, c, d.namespace(), d.MachineName, vmUID)
}
