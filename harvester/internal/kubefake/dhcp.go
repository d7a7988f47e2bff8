package kubefake

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// DHCP is the imitation of Harvester's managed DHCP that ManagedDHCP runs.
type DHCP struct {
	fc   *Cluster
	pool ref
	// Down makes the controller miss every VM event while set, as when the add-on is disabled: no lease is made
	// and none released.
	Down atomic.Bool
	mu   sync.Mutex
}

// ref is namespace/name.
type ref = struct{ Namespace, Name string }

// ManagedDHCP imitates Harvester's managed DHCP (the vm-dhcp-controller add-on) on the fake until the test ends.
// It creates pool, an IPPool, ready (conditions CacheReady and AgentReady True) and named on its network's
// NetworkAttachmentDefinition, as the controller's IPPool handler leaves it (pkg/controller/ippool/controller.go,
// ensureNADLabels). For every VM with a MAC address on the first NIC, on the pool's network, it makes the VM's
// VirtualMachineNetworkConfig (named after the VM and owned by it, pkg/controller/vm/common.go prepareVmNetCfg) and
// leases the MAC the first free address of the pool (or the one the VM's static-ip annotation asks for), recorded
// in the pool's status (address → MAC) and the config's (pkg/controller/vmnetcfg/controller.go, Allocate). When the
// VM is deleted it deletes the config and frees the address: the garbage collector and the config's removal
// handler (OnRemove → cleanup). The e2e stand-in imitates the controller closer; this one is what the driver's
// unit tests need.
func (fc *Cluster) ManagedDHCP(pool *kube.NetworkIPPool) *DHCP {
	fc.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fc.T.Cleanup(cancel)
	given := *pool // its conditions are set below
	pool = &given
	pool.Status.Conditions = []kube.Condition{{Type: "CacheReady", Status: corev1.ConditionTrue}, {Type: "AgentReady", Status: corev1.ConditionTrue}}
	fc.OK(kube.Create(ctx, fc.C, kube.NetworkIPPools, pool.Namespace, pool))
	netNS, netName, ok := strings.Cut(pool.Spec.NetworkName, "/")
	if !ok {
		netNS, netName = "default", pool.Spec.NetworkName
	}
	// A network that does not exist is not labelled (the controller's ensureNADLabels fails, and retries).
	if nad, err := kube.Get(ctx, fc.C, kube.Networks, netNS, netName); err == nil {
		nad.Labels = map[string]string{kube.LabelIPPoolNamespace: pool.Namespace, kube.LabelIPPoolName: pool.Name}
		fc.OK(kube.Update(ctx, fc.C, kube.Networks, netNS, nad))
	}
	d := &DHCP{fc: fc, pool: ref{pool.Namespace, pool.Name}}
	fc.OnVMs(func(ctx context.Context, vm *kubevirtv1.VirtualMachine, deleted bool) {
		if !d.Down.Load() {
			d.mu.Lock()
			d.sync(ctx, vm, deleted)
			d.mu.Unlock()
		}
	})
	return d
}

// Resync releases the leases of VMs that are gone, as the controller does once it is back: the garbage collector
// deletes the configs whose VMs are gone, and the controller's removal handler frees their addresses.
func (d *DHCP) Resync() {
	fc := d.fc
	ctx := context.Background()
	cfgs, err := kube.List(ctx, fc.C, kube.VMNetworkConfigs, "", metav1.ListOptions{})
	fc.OK(nil, err)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cfg := range cfgs {
		vm, err := fc.KV.KubevirtV1().VirtualMachines(cfg.Namespace).Get(ctx, cfg.Name, metav1.GetOptions{})
		if err != nil && len(cfg.OwnerReferences) > 0 {
			d.sync(ctx, &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Namespace: cfg.Namespace, UID: cfg.OwnerReferences[0].UID}}, true)
		} else if err == nil {
			d.sync(ctx, vm, false)
		}
	}
}

// sync leases vm's first NIC an address, or, once vm is deleted, releases it.
func (d *DHCP) sync(ctx context.Context, vm *kubevirtv1.VirtualMachine, deleted bool) {
	fc := d.fc
	pool, err := kube.Get(ctx, fc.C, kube.NetworkIPPools, d.pool.Namespace, d.pool.Name)
	if err != nil {
		fc.T.Errorf("kubefake: managed DHCP: %v", err)
		return
	}
	cfgs := fc.Dyn.Resource(kube.NetworkGroupVersion.WithResource("virtualmachinenetworkconfigs")).Namespace(vm.Namespace)
	if deleted {
		cfg, err := kube.Get(ctx, fc.C, kube.VMNetworkConfigs, vm.Namespace, vm.Name)
		if err != nil || len(cfg.OwnerReferences) == 0 || cfg.OwnerReferences[0].UID != vm.UID {
			return
		}
		for _, s := range cfg.Status.NetworkConfigs {
			if pool.Status.IPv4 != nil {
				delete(pool.Status.IPv4.Allocated, s.AllocatedIPAddress)
			}
		}
		fc.OK(kube.Update(ctx, fc.C, kube.NetworkIPPools, pool.Namespace, pool))
		_ = cfgs.Delete(ctx, vm.Name, metav1.DeleteOptions{})
		return
	}
	if vm.Spec.Template == nil || len(vm.Spec.Template.Spec.Networks) == 0 || vm.Spec.Template.Spec.Networks[0].Multus == nil ||
		vm.Spec.Template.Spec.Networks[0].Multus.NetworkName != pool.Spec.NetworkName || len(vm.Spec.Template.Spec.Domain.Devices.Interfaces) == 0 {
		return
	}
	mac := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress
	if mac == "" {
		return
	}
	if _, err := kube.Get(ctx, fc.C, kube.VMNetworkConfigs, vm.Namespace, vm.Name); err == nil {
		return // leased already: a pin changes nothing, it asks for the address leased
	}
	addr := d.free(pool, vm.Annotations["static-ip.harvesterhci.io/"+vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].Name])
	cfg := &kube.VMNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: kubevirtv1.GroupVersion.String(), Kind: "VirtualMachine", Name: vm.Name, UID: vm.UID}}},
		Spec: kube.VMNetworkConfigSpec{VMName: vm.Name, NetworkConfigs: []kube.NetworkConfig{{NetworkName: pool.Spec.NetworkName, MACAddress: mac}}}}
	if addr.IsValid() {
		if pool.Status.IPv4 == nil {
			pool.Status.IPv4 = &kube.IPv4Status{}
		}
		if pool.Status.IPv4.Allocated == nil {
			pool.Status.IPv4.Allocated = map[string]string{}
		}
		pool.Status.IPv4.Allocated[addr.String()] = mac
		fc.OK(kube.Update(ctx, fc.C, kube.NetworkIPPools, pool.Namespace, pool))
		cfg.Status.NetworkConfigs = []kube.NetworkConfigStatus{{AllocatedIPAddress: addr.String(), MACAddress: mac, NetworkName: pool.Spec.NetworkName, State: kube.NetworkConfigAllocated}}
		cfg.Status.Conditions = []kube.Condition{{Type: "Allocated", Status: corev1.ConditionTrue}}
	} else {
		cfg.Status.Conditions = []kube.Condition{{Type: "Allocated", Status: corev1.ConditionFalse, Message: "no more ip addresses left in network " + pool.Spec.NetworkName + " ipam"}}
	}
	fc.OK(kube.Create(ctx, fc.C, kube.VMNetworkConfigs, vm.Namespace, cfg))
}

// free is the address asked for when it is free, else the first free address of pool's range (invalid when none).
func (d *DHCP) free(pool *kube.NetworkIPPool, asked string) netip.Addr {
	held := func(a netip.Addr) bool {
		spec := pool.Spec.IPv4Config
		if s := a.String(); s == spec.ServerIP || s == spec.Router {
			return true
		}
		for _, x := range spec.Pool.Exclude {
			if x == a.String() {
				return true
			}
		}
		if pool.Status.IPv4 == nil {
			return false
		}
		_, taken := pool.Status.IPv4.Allocated[a.String()]
		return taken
	}
	if a, err := netip.ParseAddr(asked); err == nil {
		if held(a) {
			return netip.Addr{}
		}
		return a
	}
	first, _ := netip.ParseAddr(pool.Spec.IPv4Config.Pool.Start)
	last, _ := netip.ParseAddr(pool.Spec.IPv4Config.Pool.End)
	for a := first; a.IsValid() && !last.Less(a); a = a.Next() {
		if !held(a) {
			return a
		}
	}
	return netip.Addr{}
}
