// Package iplease takes a machine's address from an IPPool of Harvester's managed DHCP (--harvester-ip-pool-name):
// the vm-dhcp-controller add-on, whose static leases Harvester 1.9 brings (harvester/vm-dhcp-controller#157). The
// controller, not the driver, chooses the address: for every VM with a MAC address on a VM network it makes a
// VirtualMachineNetworkConfig named after the VM and owned by it (pkg/controller/vm), and leases each such NIC an
// address of the network's IPPool, recording it in the pool's status (address → MAC) and in the config's status
// (pkg/controller/vmnetcfg, Allocate). Its allocator takes a free address under a lock (pkg/ipam, AllocateIP), and
// every VM of the network — made by Rancher, by this driver's other processes or in Harvester's UI — goes through
// it, so no two NICs are leased one address. A driver that chose a free address itself and asked for it with the
// static-ip annotation would race every other VM between its read of the pool and the controller's allocation,
// and lose its lease when the race went the other way.
//
// So a create makes the VM with the first NIC's MAC address (objects.Machine.LeaseMAC), waits until the controller has
// leased that MAC an address (AwaitLease), and then pins the lease with the static-ip annotation (Pin): from then
// on the NIC keeps that address, whatever happens to its MAC, and Harvester shows it as the VM's static lease. The
// guest takes it by DHCP from the controller's agent.
//
// The controller releases the lease itself: deleting the VM deletes its VirtualMachineNetworkConfig (garbage
// collection, by the owner reference), whose removal handler frees the address in the IPPool (pkg/controller/
// vmnetcfg, OnRemove → cleanup). The driver never writes the pool or the config, so nothing is released twice; rm and
// a failed create's rollback wait until the release is done (AwaitRelease), so that nothing is left when they
// return. The pre-flight is Check.
//
// It talks to the cluster through harvester/internal/kube and builds the pin with harvester/objects; package
// harvester calls it from PreCreateCheck, Create and Remove.
package iplease

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Access is what waiting for a lease and for its release needs in the VM namespace: the VM's
// VirtualMachineNetworkConfig is listed and watched.
var Access = []kube.Access{
	{Group: kube.NetworkGroupVersion.Group, Resource: "virtualmachinenetworkconfigs", Verb: "list"},
	{Group: kube.NetworkGroupVersion.Group, Resource: "virtualmachinenetworkconfigs", Verb: "watch"},
}

// PoolAccess is what the pre-flight reads in the IPPool's namespace: the pool. Without it the check is skipped.
var PoolAccess = kube.Access{Group: kube.NetworkGroupVersion.Group, Resource: "ippools", Verb: "get"}

// PinAccess is what pinning the lease needs in the VM namespace: the VM is patched.
var PinAccess = kube.Access{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "patch"}

// AwaitLease waits until the vm-dhcp-controller has leased an address to the NIC with MAC address mac of vm (as
// created: its UID tells its VirtualMachineNetworkConfig from one of a VM of the same name before it) and returns
// the address. It waits until ctx ends: the controller retries what it could not do yet (its pool not loaded, say),
// and the error then says what it last saw.
func AwaitLease(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine, mac string) (netip.Addr, error) {
	var leased netip.Addr
	last, err := kube.Await(ctx, c, kube.VMNetworkConfigs, vm.Namespace, vm.Name, func(cfg *kube.VMNetworkConfig) (bool, error) {
		if !ownedBy(cfg, vm.UID) {
			return false, nil
		}
		for _, s := range cfg.Status.NetworkConfigs {
			a, err := netip.ParseAddr(s.AllocatedIPAddress)
			if sameMAC(s.MACAddress, mac) && s.State == kube.NetworkConfigAllocated && err == nil && a.Is4() {
				leased = a
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no lease of Harvester's managed DHCP for the first NIC (MAC %s) of VM %s/%s: %w; last seen: %s. "+
			"Check that the vm-dhcp-controller add-on is enabled and its IPPool for the network is ready (kubectl -n %s get virtualmachinenetworkconfig %s -o yaml)",
			mac, vm.Namespace, vm.Name, c.Explain("wait for", "the VirtualMachineNetworkConfig", err), lastSeen(last, vm.UID), vm.Namespace, vm.Name)
	}
	logging.Infof("Harvester's managed DHCP leased %s to VM %s/%s (MAC %s)", leased, vm.Namespace, vm.Name, mac)
	return leased, nil
}

// Pin sets the annotation that pins the lease of vm's first NIC to addr (objects.PinnedLease). The patch carries
// the VM's UID, which the API server refuses to change: it lands on this VM only.
func Pin(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine, addr netip.Addr) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": vm.UID, "annotations": objects.PinnedLease(addr)}})
	err := kube.RetryTransient(func() error {
		_, err := c.VirtualMachines(vm.Namespace).Patch(ctx, vm.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return c.Explain("pin the lease of "+addr.String()+" to VM", vm.Namespace+"/"+vm.Name, err)
	}
	return nil
}

// AwaitRelease waits, once VM ns/name of UID vmUID is gone, until the vm-dhcp-controller has released its leases:
// its VirtualMachineNetworkConfig is gone (garbage collection deletes it after the VM; the controller's finalizer
// holds it until the leases are freed). One of a later VM of the same name is not this VM's.
func AwaitRelease(ctx context.Context, c kube.Interface, ns, name string, vmUID types.UID) error {
	last, err := kube.Await(ctx, c, kube.VMNetworkConfigs, ns, name, func(cfg *kube.VMNetworkConfig) (bool, error) {
		return !ownedBy(cfg, vmUID), nil
	})
	if err == nil {
		logging.Infof("Harvester's managed DHCP released the lease of VM %s/%s", ns, name)
		return nil
	}
	return fmt.Errorf("the lease of VM %s/%s is not released: %w; last seen: %s. The vm-dhcp-controller add-on releases it once the VM is gone: check that it runs (kubectl -n %s get virtualmachinenetworkconfig %s -o yaml)",
		ns, name, c.Explain("wait for the release of", "the VirtualMachineNetworkConfig", err), lastSeen(last, vmUID), ns, name)
}

// ownedBy reports whether cfg exists and belongs to the VM of UID uid.
func ownedBy(cfg *kube.VMNetworkConfig, uid types.UID) bool {
	if cfg == nil {
		return false
	}
	for _, o := range cfg.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// lastSeen words what a wait last saw of the VM's VirtualMachineNetworkConfig.
func lastSeen(cfg *kube.VMNetworkConfig, uid types.UID) string {
	switch {
	case cfg == nil:
		return "no VirtualMachineNetworkConfig"
	case !ownedBy(cfg, uid):
		return "the VirtualMachineNetworkConfig of another VM of that name"
	}
	var leases []string
	for _, s := range cfg.Status.NetworkConfigs {
		leases = append(leases, fmt.Sprintf("%s %s for MAC %s", orNone(s.State), orNone(s.AllocatedIPAddress), s.MACAddress))
	}
	what := "its VirtualMachineNetworkConfig, leases: " + orNone(strings.Join(leases, ", "))
	if a := kube.FindCondition(cfg.Status.Conditions, "Allocated"); a != nil {
		what += fmt.Sprintf("; condition Allocated %s", a.Status)
		if a.Message != "" {
			what += ": " + a.Message
		}
	}
	return what
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// sameMAC reports whether a and b are the same MAC address, however spelled.
func sameMAC(a, b string) bool {
	x, errA := net.ParseMAC(a)
	y, errB := net.ParseMAC(b)
	return errA == nil && errB == nil && x.String() == y.String()
}
