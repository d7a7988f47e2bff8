// Package ippool allocates the static addresses of --harvester-ip-pool. They are allocated in Harvester, so
// that separate rancher-machine processes, node pools and Rancher servers that share a range on a network never hand out one address twice. Each allocated address is a
// ConfigMap in the network's namespace, named after the network and the address (objects.AllocationName): taking an
// address is creating that ConfigMap, and the API server lets exactly one create of a name succeed — there is no
// read-then-write. The ConfigMap records the machine's VM (namespace/name, and its UID once the VM exists); the
// VM names the ConfigMap in an annotation.
//
// An allocation is released by Remove and by a failed create's rollback, once the VM is gone. One whose machine
// is gone for another reason (a create killed mid-way, a VM deleted by hand) is reclaimed by the next allocation
// that comes to its address: deleted, on the condition that nobody changed it since it was read (UID and
// resourceVersion preconditions), then created afresh — again a create that only one can win. Not before its VM
// and VMI are gone, so a guest still shutting down keeps its address; and an allocation whose VM does not exist
// yet (no UID recorded: a create in flight) only once its lifetime is over.
//
// It is the driver's allocation layer: it talks to the cluster through harvester/internal/kube and allocates by the
// address plan of harvester/objects (objects.AddressPlan), which builds its objects; harvester/preflight checks a
// plan with it (Check), package harvester allocates at Create and releases at Remove.
package ippool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Margin is added to the create timeout to make an in-flight allocation's lifetime. It covers a VM
// create that the API server completes after the driver gave up on it, and the difference between this host's
// clock, on which the expiry is judged, and the API server's, which stamped the allocation's creationTimestamp.
// A variable for tests.
var Margin = time.Minute

// Now is the clock reclaim decisions are made on; a variable for tests.
var Now = time.Now

// Access is what allocating, recording and releasing an address needs in the network's namespace.
var Access = []kube.Access{
	{Resource: "configmaps", Verb: "create"},
	{Resource: "configmaps", Verb: "get"},
	{Resource: "configmaps", Verb: "list"},
	{Resource: "configmaps", Verb: "patch"},
	{Resource: "configmaps", Verb: "delete"},
}

// Allocation is an address this create holds.
type Allocation struct {
	Static *objects.StaticAddress
	UID    types.UID // the ConfigMap's
}

// Allocate takes, by plan, from each range of the pool (one, or one per family for a dual-stack pool, IPv4 first),
// the first address that is free or reclaimable for the plan's machine; createID, the create's id, goes on each
// allocation. Without a plan (no pool) it returns nil. On an error it returns what it took before it together
// with the error, for the create's rollback to release.
func Allocate(ctx context.Context, c kube.Interface, plan *objects.AddressPlan, createID string) ([]*Allocation, error) {
	if plan == nil {
		return nil, nil
	}
	scan, err := newPoolScan(ctx, c, plan)
	if err != nil {
		return nil, err
	}
	scan.createID = createID
	var taken []*Allocation
	for _, pool := range plan.Ranges {
		a, err := scan.allocate(ctx, pool, taken)
		if err != nil {
			return taken, err
		}
		taken = append(taken, a)
	}
	return taken, nil
}

// allocate takes the first free or reclaimable address of pool; before are the addresses this create took from
// the pool's other ranges (the IPv6 address of a dual-stack pool takes the IPv4 one's MAC address).
func (s *poolScan) allocate(ctx context.Context, pool *config.IPPool, before []*Allocation) (*Allocation, error) {
	c, plan := s.c, s.plan
	lifetime := plan.CreateTimeout + Margin
	var failed error
	var taken *Allocation
	s.candidates(ctx, pool, func(addr netip.Addr, stale *corev1.ConfigMap) bool {
		var v4 *objects.StaticAddress
		if len(before) > 0 {
			v4 = before[0].Static
		}
		static := plan.Static(addr, v4)
		ref := static.Allocation
		if stale != nil {
			err := kube.Delete(ctx, c, kube.ConfigMaps, ref.Namespace, ref.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &stale.UID, ResourceVersion: &stale.ResourceVersion}})
			switch {
			case apierrors.IsConflict(err):
				return true // changed since it was read: someone else reclaimed or recorded it
			case err != nil && !kube.IsGone(err, "configmaps", ref.Name):
				failed = c.Explain("reclaim the abandoned address allocation", ref.String(), err)
				return false
			}
			logging.Infof("Reclaimed address %s from %s, whose machine is gone", addr, stale.Annotations[config.AnnotationIPVM])
		}
		got, err := kube.Create(ctx, c, kube.ConfigMaps, ref.Namespace, plan.Allocation(static, lifetime, s.createID))
		if err != nil && kube.MayHaveApplied(err) {
			got, err = s.madeAnyway(ctx, ref, lifetime, err)
		}
		switch {
		case apierrors.IsAlreadyExists(err):
			logging.Debugf("Address %s was taken a moment ago; trying the next", addr)
			return true
		case errors.As(err, new(*mayBeLeft)):
			failed = err
			return false
		case err != nil:
			failed = c.Explain("allocate address "+addr.String()+" as ConfigMap", ref.String(), err)
			return false
		}
		taken = &Allocation{Static: static, UID: got.UID}
		return false
	})
	switch {
	case failed != nil:
		return nil, failed
	case s.err != nil:
		return nil, s.err
	case taken == nil:
		var p config.Problems
		p.Addf(config.FlagIPPool, "%s", s.exhausted(pool))
		return nil, p.ErrTitled("cannot create the machine on Harvester")
	}
	static := taken.Static
	logging.Infof("Allocated address %s on network %s for VM %s (ConfigMap %s)", static.Address, plan.Network, plan.VM, static.Allocation)
	return taken, nil
}

// madeAnyway looks for the allocation whose create failed with createErr in a way that may have made it all the
// same (kube.MayHaveApplied: its answer was lost): it is this create's when it carries the create's id. It returns
// that allocation; an AlreadyExists error when the name is someone else's (the next address is tried); createErr
// when there is none; or a *mayBeLeft when it cannot tell.
func (s *poolScan) madeAnyway(ctx context.Context, ref config.Ref, lifetime time.Duration, createErr error) (*corev1.ConfigMap, error) {
	var cm *corev1.ConfigMap
	err := kube.RetryTransient(func() (err error) {
		cm, err = kube.Get(ctx, s.c, kube.ConfigMaps, ref.Namespace, ref.Name)
		return err
	})
	switch {
	case kube.IsGone(err, "configmaps", ref.Name):
		return nil, createErr
	case err != nil:
		return nil, &mayBeLeft{created: s.c.Explain("allocate address as ConfigMap", ref.String(), createErr),
			read: s.c.Explain("read", ref.String(), err), lifetime: lifetime}
	case cm.Annotations[config.AnnotationCreateID] != s.createID || s.createID == "":
		return nil, apierrors.NewAlreadyExists(corev1.Resource("configmaps"), ref.Name)
	}
	logging.Infof("The answer to the create of address allocation %s was lost, but the API server made it", ref)
	return cm, nil
}

// mayBeLeft is an allocation whose create's answer was lost and that could not be read: it may exist.
type mayBeLeft struct {
	created, read error
	lifetime      time.Duration
}

func (e *mayBeLeft) Error() string {
	return fmt.Sprintf("%v; the allocation may have been made all the same and could not be read (%v): if it was, the next allocation of its address reclaims it %s after its creation",
		e.created, e.read, e.lifetime)
}

// RecordVM writes the VM's UID into each allocation: from now on it is held as long as that VM (or its VMI)
// exists. The patch carries the allocation's UID, which the API server refuses to change, so it never lands on an
// allocation made afresh by someone else.
func RecordVM(ctx context.Context, c kube.Interface, as []*Allocation, vm *kubevirtv1.VirtualMachine) error {
	for _, a := range as {
		ref := a.Static.Allocation
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"uid":         a.UID,
			"annotations": map[string]string{config.AnnotationIPVMUID: string(vm.UID)},
		}})
		if err := kube.MergePatch(ctx, c, kube.ConfigMaps, ref.Namespace, ref.Name, patch); err != nil {
			return c.Explain("record VM "+vm.Namespace+"/"+vm.Name+" in its address allocation", ref.String(), err)
		}
	}
	return nil
}

// poolScan walks a pool's addresses against the allocations on its network, read once. Whether an allocation is
// still held is judged on the VMs and VMIs of its machine's namespace, also read once (when first needed).
type poolScan struct {
	c        kube.Interface
	plan     *objects.AddressPlan
	createID string // written on the allocations this scan makes
	network  config.Ref
	existing map[string]*corev1.ConfigMap // the network's allocations, by name
	machines map[string]*machinesIn       // by namespace
	err      error                        // a failure that ended the walk

	held, inFlight int       // allocations found held by the last walk, and how many of them are creates in flight
	firstExpiry    time.Time // when the first in-flight allocation expires
}

// machinesIn are the VMs and VMIs of the node drivers in a namespace, by name; err when they could not be read.
type machinesIn struct {
	vms  map[string]*kubevirtv1.VirtualMachine
	vmis map[string]*kubevirtv1.VirtualMachineInstance
	err  error
}

func newPoolScan(ctx context.Context, c kube.Interface, plan *objects.AddressPlan) (*poolScan, error) {
	network := plan.Network
	list, err := kube.List(ctx, c, kube.ConfigMaps, network.Namespace, metav1.ListOptions{LabelSelector: allocationSelector(network)})
	if err != nil {
		return nil, c.Explain("list the address allocations of network "+network.String()+" in namespace", network.Namespace, err)
	}
	s := &poolScan{c: c, plan: plan, network: network, existing: map[string]*corev1.ConfigMap{}, machines: map[string]*machinesIn{}}
	for i := range list {
		s.existing[list[i].Name] = &list[i]
	}
	return s, nil
}

func allocationSelector(network config.Ref) string {
	return config.CreatorSelector + "," + config.LabelIPNetwork + "=" + config.LabelValue(network.Name)
}

// candidates calls yield with each address of pool (a range of the scan's), in order, that is free (stale nil) or held by an
// allocation that may be reclaimed (stale), until yield returns false.
func (s *poolScan) candidates(ctx context.Context, pool *config.IPPool, yield func(addr netip.Addr, stale *corev1.ConfigMap) bool) {
	s.held, s.inFlight, s.firstExpiry = 0, 0, time.Time{}
	pool.Addresses(func(addr netip.Addr) bool {
		cm := s.existing[objects.AllocationName(s.network, addr)]
		switch {
		case ctx.Err() != nil:
			s.err = ctx.Err()
			return false
		case cm == nil:
			return yield(addr, nil)
		case s.isHeld(ctx, cm):
			s.held++
			return true
		}
		return yield(addr, cm)
	})
}

// isHeld reports whether an allocation still belongs to a machine: its VM or VMI exists (by UID when the UID is
// recorded, else by the VM's annotation naming the allocation), or it is a create in flight within its lifetime.
// When that cannot be told (the VMs cannot be read, the record is unreadable) it is held.
func (s *poolScan) isHeld(ctx context.Context, cm *corev1.ConfigMap) bool {
	uid := cm.Annotations[config.AnnotationIPVMUID]
	if uid == "" {
		if expiry := allocationExpiry(cm); Now().Before(expiry) {
			if s.inFlight++; s.firstExpiry.IsZero() || expiry.Before(s.firstExpiry) {
				s.firstExpiry = expiry
			}
			return true
		}
	}
	vmNS, vmName, ok := strings.Cut(cm.Annotations[config.AnnotationIPVM], "/")
	if !ok {
		return true
	}
	m := s.machinesIn(ctx, vmNS)
	if m.err != nil {
		logging.Debugf("Cannot tell whether allocation %s/%s is still held (%v); leaving it", cm.Namespace, cm.Name, m.err)
		return true
	}
	vm, vmi := m.vms[vmName], m.vmis[vmName]
	if uid != "" {
		return (vm != nil && string(vm.UID) == uid) || (vmi != nil && ownedByUID(vmi.OwnerReferences, uid))
	}
	ref := config.Ref{Namespace: cm.Namespace, Name: cm.Name}.String()
	return (vm != nil && names(vm.Annotations, ref)) || (vmi != nil && names(vmi.Annotations, ref))
}

// names reports whether annotations name allocation ref in AnnotationIPAllocation (one of two, comma-separated,
// for a dual-stack pool).
func names(annotations map[string]string, ref string) bool {
	return slices.Contains(strings.Split(annotations[config.AnnotationIPAllocation], ","), ref)
}

// allocationExpiry is when an allocation without a VM counts as abandoned: its creationTimestamp (the API
// server's clock) plus the lifetime it records (the default create timeout's when unreadable).
func allocationExpiry(cm *corev1.ConfigMap) time.Time {
	lifetime := time.Duration(config.DefaultCreateTimeoutSecs)*time.Second + Margin
	if secs, err := strconv.Atoi(cm.Annotations[config.AnnotationIPLifetime]); err == nil && secs > 0 {
		lifetime = time.Duration(secs) * time.Second
	}
	return cm.CreationTimestamp.Add(lifetime)
}

func ownedByUID(owners []metav1.OwnerReference, uid string) bool {
	for _, o := range owners {
		if string(o.UID) == uid {
			return true
		}
	}
	return false
}

// machinesIn lists the node drivers' VMs and VMIs in namespace ns, once per scan.
func (s *poolScan) machinesIn(ctx context.Context, ns string) *machinesIn {
	if m := s.machines[ns]; m != nil {
		return m
	}
	m := &machinesIn{vms: map[string]*kubevirtv1.VirtualMachine{}, vmis: map[string]*kubevirtv1.VirtualMachineInstance{}}
	s.machines[ns] = m
	opts := metav1.ListOptions{LabelSelector: config.CreatorSelector}
	vms, err := s.c.VirtualMachines(ns).List(ctx, opts)
	if err != nil {
		m.err = err
		return m
	}
	for i := range vms.Items {
		m.vms[vms.Items[i].Name] = &vms.Items[i]
	}
	vmis, err := s.c.VirtualMachineInstances(ns).List(ctx, opts)
	if err != nil {
		m.err = err
		return m
	}
	for i := range vmis.Items {
		m.vmis[vmis.Items[i].Name] = &vmis.Items[i]
	}
	return m
}

// exhausted says that no address of pool is left, how many are held by creates in flight, and what to do. The
// counts are of the last walk of pool.
func (s *poolScan) exhausted(pool *config.IPPool) string {
	msg := fmt.Sprintf("the range %s on network %s is exhausted: all %s of its addresses are allocated", pool, s.network, pool.Size())
	if s.inFlight > 0 {
		msg += fmt.Sprintf(", %d of them to creates still in flight (the first expires at %s unless its VM appears)",
			s.inFlight, s.firstExpiry.UTC().Format(time.RFC3339))
	}
	return msg + fmt.Sprintf(". Remove machines that hold one, or widen the range; the allocations are the ConfigMaps labelled %s in namespace %s",
		allocationSelector(s.network), s.network.Namespace)
}

// tooFew words a range that has found addresses free or reclaimable, fewer than the machines that need one.
func (s *poolScan) tooFew(pool *config.IPPool, found, machines int) string {
	return fmt.Sprintf("the range %s on network %s has %d of its %s addresses free, %d machines need one each. "+
		"Remove machines that hold one, or widen the range; the allocations are the ConfigMaps labelled %s in namespace %s",
		pool, s.network, found, pool.Size(), machines, allocationSelector(s.network), s.network.Namespace)
}

// Check is the pre-flight of an address plan: the credential may allocate in the network's namespace, and each
// range (both of a dual-stack pool) has an address free or reclaimable for each of machines machines (a machine
// pool's quantity; 1 for one). It creates nothing. It returns the addresses a create would take now, as Allocate
// takes them (each range's first free or reclaimable one, IPv4 first), or nil when it found a problem.
func Check(ctx context.Context, c kube.Interface, plan *objects.AddressPlan, machines int, p *config.Problems) []*objects.StaticAddress {
	if plan == nil {
		return nil
	}
	ns := plan.Network.Namespace
	denied, err := c.Denied(ctx, ns, Access)
	switch {
	case err != nil:
		p.Addf(config.FlagIPPool, "%v", c.Explain("check the credential's permissions in namespace", ns, err))
		return nil
	case len(denied) > 0:
		what := make([]string, len(denied))
		for i, a := range denied {
			what[i] = a.String()
		}
		p.Addf(config.FlagIPPool, "the credential may not %s in namespace %s, where the addresses of network %s are allocated; ask for a role that allows managing ConfigMaps there",
			lists.Join(what, "and"), ns, plan.Network)
		return nil
	}
	scan, err := newPoolScan(ctx, c, plan)
	if err != nil {
		p.Addf(config.FlagIPPool, "%v", err)
		return nil
	}
	var (
		first []*objects.StaticAddress
		ok    = true
	)
	for _, pool := range plan.Ranges {
		found := 0
		var took netip.Addr
		scan.candidates(ctx, pool, func(addr netip.Addr, _ *corev1.ConfigMap) bool {
			if found == 0 {
				took = addr
			}
			found++
			return found < machines
		})
		switch {
		case scan.err != nil:
			p.Addf(config.FlagIPPool, "%v", scan.err)
			return nil
		case found == 0:
			p.Addf(config.FlagIPPool, "%s", scan.exhausted(pool))
			ok = false
		case found < machines:
			p.Addf(config.FlagIPPool, "%s", scan.tooFew(pool, found, machines))
			ok = false
		case ok:
			var v4 *objects.StaticAddress
			if len(first) > 0 {
				v4 = first[0]
			}
			first = append(first, plan.Static(took, v4))
		}
	}
	if !ok {
		return nil
	}
	return first
}

// ReleaseMachine releases the allocations of machine vm on its pool's network (namespace/name, as
// saved in Driver.IPPoolNetwork), found by their labels; a machine without a pool ("") makes no request. With
// vmUID set, only the allocations that record that VM UID: one for a later VM of the same name is not this
// machine's.
func ReleaseMachine(ctx context.Context, c kube.Interface, network string, vm config.Ref, vmUID types.UID) error {
	ns, _, ok := strings.Cut(network, "/")
	if !ok {
		return nil
	}
	selector := config.CreatorSelector + "," + config.LabelIPVMNamespace + "=" + config.LabelValue(vm.Namespace) + "," + config.LabelIPVMName + "=" + config.LabelValue(vm.Name)
	list, err := kube.List(ctx, c, kube.ConfigMaps, ns, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return c.Explain("list the address allocations of VM "+vm.String()+" in namespace", ns, err)
	}
	var errs []error
	for _, cm := range list {
		if vmUID != "" && cm.Annotations[config.AnnotationIPVMUID] != string(vmUID) {
			logging.Debugf("Address allocation %s/%s is not for VM uid %s; left alone", cm.Namespace, cm.Name, vmUID)
			continue
		}
		errs = append(errs, Release(ctx, c, config.Ref{Namespace: cm.Namespace, Name: cm.Name}, cm.UID, vm))
	}
	return errors.Join(errs...)
}

// Release deletes an allocation if it is machine vm's (and, when uid is set, has that UID); one already
// gone, or meanwhile reclaimed for another machine, is left alone.
func Release(ctx context.Context, c kube.Interface, ref config.Ref, uid types.UID, vm config.Ref) error {
	mine := vm.String()
	for attempt := 0; ; attempt++ {
		cm, err := kube.Get(ctx, c, kube.ConfigMaps, ref.Namespace, ref.Name)
		switch {
		case kube.IsGone(err, "configmaps", ref.Name):
			return nil
		case err != nil:
			return c.Explain("read address allocation", ref.String(), err)
		case cm.Labels[config.LabelCreator] != config.CreatorName || cm.Annotations[config.AnnotationIPVM] != mine || (uid != "" && cm.UID != uid):
			logging.Debugf("Address allocation %s is no longer this machine's; left alone", ref)
			return nil
		}
		err = kube.Delete(ctx, c, kube.ConfigMaps, ref.Namespace, ref.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}})
		switch {
		case err == nil:
			logging.Infof("Released address %s (ConfigMap %s)", cm.Annotations[config.AnnotationIPAddress], ref)
			return nil
		case kube.IsGone(err, "configmaps", ref.Name):
			return nil
		case !apierrors.IsConflict(err) || attempt >= 5:
			return c.Explain("release address allocation", ref.String(), err)
		}
	}
}
