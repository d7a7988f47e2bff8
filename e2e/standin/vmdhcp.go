package standin

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The managed DHCP's resources (network.harvesterhci.io/v1alpha1, the CRDs the bed installs from e2e/crds) and the
// networks they serve.
var (
	ippoolsGVR   = schema.GroupVersionResource{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "ippools"}
	vmnetcfgsGVR = schema.GroupVersionResource{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "virtualmachinenetworkconfigs"}
	nadsGVR      = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
)

// Names the vm-dhcp-controller writes (pkg/util/common.go; the finalizer is the one wrangler's generated OnRemove
// adds for the handler pkg/controller/vmnetcfg/controller.go registers, controllerName).
const (
	labelIPPoolNamespace = "network.harvesterhci.io/ippool-namespace"
	labelIPPoolName      = "network.harvesterhci.io/ippool-name"
	labelVMName          = "harvesterhci.io/vmName"
	vmnetcfgFinalizer    = "wrangler.cattle.io/vm-dhcp-vmnetcfg-controller"
	staticIPPrefix       = "static-ip.harvesterhci.io/"
	reservedMark         = "RESERVED"
	excludedMark         = "EXCLUDED"
)

// ManagedDHCP imitates Harvester's managed DHCP, the vm-dhcp-controller add-on (harvester/vm-dhcp-controller at
// b8c4473, the head of #157, whose CRDs the bed installs), to the extent the node driver relies on it:
//
//   - its IPPool handler (pkg/controller/ippool/controller.go): an IPPool is taken up, its status conditions
//     CacheReady and AgentReady True, its server and router addresses and its exclusions marked in
//     status.ipv4.allocated, and its network's NetworkAttachmentDefinition labelled with the pool
//     (ensureNADLabels);
//   - its VM handler (pkg/controller/vm/controller.go OnChange, common.go prepareVmNetCfg): for a VM with NICs that
//     have a MAC address on a Multus network, a VirtualMachineNetworkConfig named after the VM, labelled with it
//     and owned by it, one network config per such NIC, with the address a static-ip.harvesterhci.io/<nic>
//     annotation asks for (#157);
//   - its VirtualMachineNetworkConfig handler (pkg/controller/vmnetcfg/controller.go, Allocate and OnRemove →
//     cleanup): each network config leased an address of the pool its network's labels name — the address the MAC
//     holds already, else the one asked for when free, else the first free one —, recorded in the pool's
//     status (address → MAC) and the config's (state Allocated, condition Allocated); on removal (the garbage
//     collector deletes the config of a deleted VM) the addresses freed and the finalizer dropped.
//
// Its allocator is one worker, as the controller's allocation is under one lock (pkg/ipam). The DHCP server (the
// controller's agent) is the KubeVirt stand-in's guest, which reports the address leased to a NIC its network data
// asks DHCP for (leasedAddresses). Unlike the add-on, it serves only the VMs of the namespaces it is given, so that
// the scenarios beside it keep their VMs to themselves.
type ManagedDHCP struct {
	dyn        dynamic.Interface
	namespaces []string
	// releaseDelay is how long after a config's deletion its addresses are freed: the controller's removal
	// handler runs when its queue comes to the config, a moment later, and a scenario sees by it whether rm
	// waits for the release rather than finding it done by chance.
	releaseDelay time.Duration
	pools        cache.SharedIndexInformer
	configs      cache.SharedIndexInformer
	vms          cache.SharedIndexInformer
	kick         chan struct{}
	cancel       context.CancelFunc
	wg           sync.WaitGroup

	mu      sync.Mutex
	lastErr error
}

// StartManagedDHCP starts the managed DHCP on the cluster cfg points at, for the VMs of namespaces, freeing a
// deleted config's addresses releaseDelay after its deletion, and waits until its caches are synced. It runs until
// Stop.
func StartManagedDHCP(ctx context.Context, cfg *rest.Config, releaseDelay time.Duration, namespaces ...string) (*ManagedDHCP, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "e2e-standin-vm-dhcp-controller"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	d := &ManagedDHCP{dyn: dyn, namespaces: namespaces, releaseDelay: releaseDelay, kick: make(chan struct{}, 1)}
	informer := func(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return dyn.Resource(gvr).List(ctx, o)
			},
			WatchFuncWithContext: dyn.Resource(gvr).Watch,
		}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	}
	d.pools, d.configs = informer(ippoolsGVR), informer(vmnetcfgsGVR)
	d.vms = informer(kubevirtv1.SchemeGroupVersion.WithResource("virtualmachines"))
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.cancel = cancel
	for _, inf := range []cache.SharedIndexInformer{d.pools, d.configs, d.vms} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { d.poke() }, UpdateFunc: func(any, any) { d.poke() }, DeleteFunc: func(any) { d.poke() },
		}); err != nil {
			cancel()
			return nil, err
		}
		d.wg.Go(func() { inf.RunWithContext(run) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), d.pools.HasSynced, d.configs.HasSynced, d.vms.HasSynced) {
		d.Stop()
		return nil, fmt.Errorf("the managed DHCP's caches did not sync: %w", ctx.Err())
	}
	d.wg.Go(func() { d.work(run) })
	d.poke()
	return d, nil
}

// Stop stops the managed DHCP and waits until it has.
func (d *ManagedDHCP) Stop() {
	d.cancel()
	d.wg.Wait()
}

// LastError is what the last pass failed with, nil when it did not: a scenario shows it when a lease never comes.
func (d *ManagedDHCP) LastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr
}

func (d *ManagedDHCP) poke() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// work makes a pass over every pool, VM and config whenever one changes, and again shortly after a pass that
// failed (a conflict with its own earlier write, say), as the controller's work queue retries.
func (d *ManagedDHCP) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.kick:
		}
		err := d.pass(ctx)
		d.mu.Lock()
		d.lastErr = err
		d.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			time.AfterFunc(100*time.Millisecond, d.poke)
		}
	}
}

// pass takes up the pools, makes the VMs' configs and leases or releases their addresses.
func (d *ManagedDHCP) pass(ctx context.Context) error {
	var errs []string
	note := func(err error) {
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			errs = append(errs, err.Error())
		} else if err != nil {
			errs = append(errs, "retry: "+err.Error())
		}
	}
	for _, o := range d.pools.GetStore().List() {
		note(d.takeUp(ctx, o.(*unstructured.Unstructured)))
	}
	for _, o := range d.vms.GetStore().List() {
		note(d.syncVM(ctx, o.(*unstructured.Unstructured)))
	}
	for _, o := range d.configs.GetStore().List() {
		note(d.syncConfig(ctx, o.(*unstructured.Unstructured)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("managed DHCP: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (d *ManagedDHCP) serves(ns string) bool { return slices.Contains(d.namespaces, ns) }

// takeUp readies a pool of a served namespace: its conditions, its reserved and excluded addresses, and its
// network's labels.
func (d *ManagedDHCP) takeUp(ctx context.Context, pool *unstructured.Unstructured) error {
	if !d.serves(pool.GetNamespace()) {
		return nil
	}
	netNS, netName := networkRef(str(pool.Object, "spec", "networkName"))
	nad, err := d.dyn.Resource(nadsGVR).Namespace(netNS).Get(ctx, netName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if l := nad.GetLabels(); l[labelIPPoolNamespace] != pool.GetNamespace() || l[labelIPPoolName] != pool.GetName() {
		if l == nil {
			l = map[string]string{}
		}
		l[labelIPPoolNamespace], l[labelIPPoolName] = pool.GetNamespace(), pool.GetName()
		nad.SetLabels(l)
		if _, err := d.dyn.Resource(nadsGVR).Namespace(netNS).Update(ctx, nad, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	upd := pool.DeepCopy()
	allocated := allocatedOf(upd)
	for _, a := range []string{str(upd.Object, "spec", "ipv4Config", "serverIP"), str(upd.Object, "spec", "ipv4Config", "router")} {
		if a != "" {
			allocated[a] = reservedMark
		}
	}
	excluded, _, _ := unstructured.NestedStringSlice(upd.Object, "spec", "ipv4Config", "pool", "exclude")
	for _, a := range excluded {
		allocated[a] = excludedMark
	}
	setAllocated(upd, allocated)
	conditions := []any{
		map[string]any{"type": "Registered", "status": "True"},
		map[string]any{"type": "CacheReady", "status": "True"},
		map[string]any{"type": "AgentReady", "status": "True"},
	}
	if err := unstructured.SetNestedSlice(upd.Object, conditions, "status", "conditions"); err != nil {
		return err
	}
	return d.updateStatus(ctx, ippoolsGVR, pool, upd)
}

// syncVM makes or updates the config of a VM of a served namespace, as the controller's VM handler does.
func (d *ManagedDHCP) syncVM(ctx context.Context, obj *unstructured.Unstructured) error {
	if !d.serves(obj.GetNamespace()) || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	var vm kubevirtv1.VirtualMachine
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &vm); err != nil || vm.Spec.Template == nil {
		return err
	}
	var configs []any
	for _, nic := range vm.Spec.Template.Spec.Domain.Devices.Interfaces {
		if nic.MacAddress == "" {
			continue
		}
		for _, n := range vm.Spec.Template.Spec.Networks {
			if n.Name == nic.Name && n.Multus != nil {
				nc := map[string]any{"macAddress": nic.MacAddress, "networkName": n.Multus.NetworkName}
				if ip := vm.Annotations[staticIPPrefix+nic.Name]; ip != "" {
					nc["ipAddress"] = ip
				}
				configs = append(configs, nc)
			}
		}
	}
	if len(configs) == 0 {
		return nil
	}
	api := d.dyn.Resource(vmnetcfgsGVR).Namespace(vm.Namespace)
	old, exists, err := d.configs.GetStore().GetByKey(vm.Namespace + "/" + vm.Name)
	if err != nil {
		return err
	}
	if !exists {
		cfg := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": vmnetcfgsGVR.GroupVersion().String(), "kind": "VirtualMachineNetworkConfig",
			"metadata": map[string]any{"name": vm.Name, "namespace": vm.Namespace, "labels": map[string]any{labelVMName: vm.Name},
				"ownerReferences": []any{map[string]any{"apiVersion": kubevirtv1.SchemeGroupVersion.String(), "kind": "VirtualMachine", "name": vm.Name, "uid": string(vm.UID)}}},
			"spec": map[string]any{"vmName": vm.Name, "networkConfigs": configs},
		}}
		_, err := api.Create(ctx, cfg, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache has not seen it yet
		}
		return err
	}
	cfg := old.(*unstructured.Unstructured)
	if have, _, _ := unstructured.NestedSlice(cfg.Object, "spec", "networkConfigs"); reflect.DeepEqual(have, configs) || cfg.GetDeletionTimestamp() != nil {
		return nil
	}
	upd := cfg.DeepCopy()
	if err := unstructured.SetNestedSlice(upd.Object, configs, "spec", "networkConfigs"); err != nil {
		return err
	}
	_, err = api.Update(ctx, upd, metav1.UpdateOptions{})
	return err
}

// syncConfig leases the addresses of a config, or releases them once it is being deleted.
func (d *ManagedDHCP) syncConfig(ctx context.Context, cfg *unstructured.Unstructured) error {
	if !d.serves(cfg.GetNamespace()) {
		return nil
	}
	api := d.dyn.Resource(vmnetcfgsGVR).Namespace(cfg.GetNamespace())
	if cfg.GetDeletionTimestamp() != nil {
		if !slices.Contains(cfg.GetFinalizers(), vmnetcfgFinalizer) {
			return nil
		}
		if wait := time.Until(cfg.GetDeletionTimestamp().Add(d.releaseDelay)); wait > 0 {
			time.AfterFunc(wait, d.poke)
			return nil
		}
		if err := d.release(ctx, cfg); err != nil {
			return err
		}
		upd := cfg.DeepCopy()
		upd.SetFinalizers(slices.DeleteFunc(upd.GetFinalizers(), func(f string) bool { return f == vmnetcfgFinalizer }))
		_, err := api.Update(ctx, upd, metav1.UpdateOptions{})
		return err
	}
	if !slices.Contains(cfg.GetFinalizers(), vmnetcfgFinalizer) {
		upd := cfg.DeepCopy()
		upd.SetFinalizers(append(upd.GetFinalizers(), vmnetcfgFinalizer))
		_, err := api.Update(ctx, upd, metav1.UpdateOptions{})
		return err // the update's event brings the config back
	}
	specs, _, _ := unstructured.NestedSlice(cfg.Object, "spec", "networkConfigs")
	statuses, _, _ := unstructured.NestedSlice(cfg.Object, "status", "networkConfigs")
	leased := map[string]bool{}
	for _, s := range statuses {
		if m, _ := s.(map[string]any); m["state"] == "Allocated" {
			leased[fmt.Sprint(m["macAddress"])] = true
		}
	}
	var out []any
	allocatedCond := map[string]any{"type": "Allocated", "status": "True"}
	for _, s := range specs {
		nc, _ := s.(map[string]any)
		mac, network := fmt.Sprint(nc["macAddress"]), fmt.Sprint(nc["networkName"])
		if leased[mac] {
			continue
		}
		addr, why, err := d.allocate(ctx, network, mac, fmt.Sprint(nc["ipAddress"]))
		if err != nil {
			return err
		}
		if why != "" {
			allocatedCond = map[string]any{"type": "Allocated", "status": "False", "message": why}
			continue
		}
		out = append(out, map[string]any{"macAddress": mac, "networkName": network, "allocatedIPAddress": addr, "state": "Allocated"})
	}
	if len(out) == 0 && allocatedCond["status"] == "True" {
		return nil
	}
	upd := cfg.DeepCopy()
	if err := unstructured.SetNestedSlice(upd.Object, append(statuses, out...), "status", "networkConfigs"); err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(upd.Object, []any{allocatedCond}, "status", "conditions"); err != nil {
		return err
	}
	return d.updateStatus(ctx, vmnetcfgsGVR, cfg, upd)
}

// allocate leases mac an address of the pool that serves network, recorded in the pool's status: the one the MAC
// holds already, else asked when it is free, else the range's first free one. why says why there is none (no
// pool, none free), as the controller's Allocated condition does.
func (d *ManagedDHCP) allocate(ctx context.Context, network, mac, asked string) (addr, why string, err error) {
	pool, err := d.poolOf(ctx, network)
	if err != nil || pool == nil {
		return "", "no IPPool serves network " + network, err
	}
	allocated := allocatedOf(pool)
	for a, m := range allocated {
		if m == mac {
			return a, "", nil
		}
	}
	start, errS := netip.ParseAddr(str(pool.Object, "spec", "ipv4Config", "pool", "start"))
	end, errE := netip.ParseAddr(str(pool.Object, "spec", "ipv4Config", "pool", "end"))
	if errS != nil || errE != nil {
		return "", "IPPool " + pool.GetNamespace() + "/" + pool.GetName() + " has no range", nil
	}
	pick := ""
	if a, err := netip.ParseAddr(asked); err == nil && allocated[a.String()] == "" && !a.Less(start) && !end.Less(a) {
		pick = a.String()
	}
	for a := start; pick == "" && a.IsValid() && !end.Less(a); a = a.Next() {
		if allocated[a.String()] == "" {
			pick = a.String()
		}
	}
	if pick == "" {
		return "", "no more ip addresses left in network " + network + " ipam", nil
	}
	upd := pool.DeepCopy()
	allocated[pick] = mac
	setAllocated(upd, allocated)
	return pick, "", d.updateStatus(ctx, ippoolsGVR, pool, upd)
}

// release frees the addresses of a config being deleted in the pools of their networks.
func (d *ManagedDHCP) release(ctx context.Context, cfg *unstructured.Unstructured) error {
	statuses, _, _ := unstructured.NestedSlice(cfg.Object, "status", "networkConfigs")
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		pool, err := d.poolOf(ctx, fmt.Sprint(m["networkName"]))
		if err != nil || pool == nil {
			return err
		}
		allocated := allocatedOf(pool)
		if a := fmt.Sprint(m["allocatedIPAddress"]); allocated[a] == fmt.Sprint(m["macAddress"]) {
			delete(allocated, a)
			upd := pool.DeepCopy()
			setAllocated(upd, allocated)
			if err := d.updateStatus(ctx, ippoolsGVR, pool, upd); err != nil {
				return err
			}
		}
	}
	return nil
}

// poolOf reads the pool the labels of network's NetworkAttachmentDefinition name (the controller's
// getIPPoolFromNetworkName), from the API server: an allocation must see the pool's latest status. nil when the
// network names none.
func (d *ManagedDHCP) poolOf(ctx context.Context, network string) (*unstructured.Unstructured, error) {
	netNS, netName := networkRef(network)
	nad, err := d.dyn.Resource(nadsGVR).Namespace(netNS).Get(ctx, netName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ns, name := nad.GetLabels()[labelIPPoolNamespace], nad.GetLabels()[labelIPPoolName]
	if name == "" {
		return nil, nil
	}
	return d.dyn.Resource(ippoolsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// updateStatus writes upd's status when it differs from old's.
func (d *ManagedDHCP) updateStatus(ctx context.Context, gvr schema.GroupVersionResource, old, upd *unstructured.Unstructured) error {
	if reflect.DeepEqual(old.Object["status"], upd.Object["status"]) {
		return nil
	}
	_, err := d.dyn.Resource(gvr).Namespace(upd.GetNamespace()).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// networkRef splits a Multus network name, namespace/name; a name alone is in default (the controller's
// normalizeNetworkName, pkg/webhook/vmnetcfg/validator.go).
func networkRef(s string) (namespace, name string) {
	if ns, n, ok := strings.Cut(s, "/"); ok {
		return ns, n
	}
	return "default", s
}

// allocatedOf is a pool's status.ipv4.allocated (address → MAC, or a mark), a copy.
func allocatedOf(pool *unstructured.Unstructured) map[string]string {
	m, _, _ := unstructured.NestedStringMap(pool.Object, "status", "ipv4", "allocated")
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// setAllocated writes allocated into pool's status with its used and available counts, as the controller's
// status update does (pkg/controller/ippool/controller.go, the counts of its allocator).
func setAllocated(pool *unstructured.Unstructured, allocated map[string]string) {
	start, _ := netip.ParseAddr(str(pool.Object, "spec", "ipv4Config", "pool", "start"))
	end, _ := netip.ParseAddr(str(pool.Object, "spec", "ipv4Config", "pool", "end"))
	size, used := int64(0), int64(0)
	for a := start; a.IsValid() && end.IsValid() && !end.Less(a); a = a.Next() {
		size++
		if allocated[a.String()] != "" {
			used++
		}
	}
	m := map[string]any{}
	for k, v := range allocated {
		m[k] = v
	}
	_ = unstructured.SetNestedMap(pool.Object, map[string]any{"allocated": m, "used": used, "available": size - used}, "status", "ipv4")
}

func str(obj map[string]any, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}
