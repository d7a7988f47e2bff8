package ippool

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// fakeCluster is a Harvester with namespace default, where network default/vlan1's addresses are allocated and
// the machines run.
type fakeCluster struct{ *kubefake.Cluster }

func newFakeCluster(t *testing.T) *fakeCluster {
	fc := &fakeCluster{kubefake.New(t, "")}
	fc.Asked = Access
	fc.Namespace("default")
	kubefake.CaptureLog(t)
	return fc
}

// poolPlan is the address plan of machine's configuration with pool (one range, or an IPv4 and an IPv6 range)
// on network default/vlan1, and a create timeout of 30 s: a lifetime of 90 s for its allocations.
func poolPlan(t *testing.T, machine, pool string) *objects.AddressPlan {
	t.Helper()
	gateway, dns := "10.0.0.1", "10.0.0.2"
	if strings.Contains(pool, ",") {
		gateway, dns = "10.0.0.1,2001:db8::1", "10.0.0.2,2001:db8::53"
	}
	cfg, err := config.ParseConfig(machine, configtest.With(configtest.MinimalOptions(), config.FlagCreateTimeout, "30",
		config.FlagIPPool, pool, config.FlagIPPoolGateway, gateway, config.FlagIPPoolDNS, dns))
	if err != nil {
		t.Fatal(err)
	}
	return objects.PlanAddresses(cfg)
}

// allocate takes machine's addresses from pool, failing the test when it cannot.
func (fc *fakeCluster) allocate(machine, pool string) []*Allocation {
	fc.T.Helper()
	taken, err := Allocate(context.Background(), fc.C, poolPlan(fc.T, machine, pool), "this-create")
	if err != nil {
		fc.T.Fatal(err)
	}
	return taken
}

// allocations returns the address allocations in namespace default, by name.
func (fc *fakeCluster) allocations() map[string]corev1.ConfigMap { return fc.ConfigMaps("default") }

// vm creates a node driver's VM named name in namespace default.
func (fc *fakeCluster) vm(name string, annotations map[string]string) *kubevirtv1.VirtualMachine {
	fc.T.Helper()
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Create(context.Background(), &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", Labels: map[string]string{config.LabelCreator: config.CreatorName}, Annotations: annotations,
	}}, metav1.CreateOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	return vm
}

// checkProblems runs the pool's pre-flight for machines machines of plan and returns what it found, "" for nothing.
func (fc *fakeCluster) checkProblems(plan *objects.AddressPlan, machines int) string {
	var p config.Problems
	Check(context.Background(), fc.C, plan, machines, &p)
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// Each machine takes the first free address of the range; the allocation names its address, range, VM and
// lifetime, is labelled for its network and VM, and records the VM's UID once the VM exists.
func TestAllocateTakesTheFirstFreeAddress(t *testing.T) {
	fc := newFakeCluster(t)
	first := fc.allocate("m1", "10.0.0.10-10.0.0.12/24")
	if len(first) != 1 || first[0].Static.Address != netip.MustParsePrefix("10.0.0.10/24") {
		t.Fatalf("allocated %+v, want the range's first address", first)
	}
	vm := fc.vm("m1", nil)
	if err := RecordVM(context.Background(), fc.C, first, vm); err != nil {
		t.Fatal(err)
	}
	cm, ok := fc.allocations()["ip-vlan1-10-0-0-10"]
	if !ok || cm.UID != first[0].UID {
		t.Fatalf("allocation %+v, want the ConfigMap of UID %s", cm, first[0].UID)
	}
	for k, want := range map[string]string{config.AnnotationIPAddress: "10.0.0.10/24", config.AnnotationIPPool: "10.0.0.10-10.0.0.12/24",
		config.AnnotationIPVM: "default/m1", config.AnnotationIPVMUID: string(vm.UID), config.AnnotationIPLifetime: "90"} {
		if cm.Annotations[k] != want {
			t.Errorf("allocation annotation %s = %q, want %q", k, cm.Annotations[k], want)
		}
	}
	for k, want := range map[string]string{config.LabelCreator: config.CreatorName, config.LabelIPNetwork: "vlan1", config.LabelIPVMNamespace: "default", config.LabelIPVMName: "m1"} {
		if cm.Labels[k] != want {
			t.Errorf("allocation label %s = %q, want %q", k, cm.Labels[k], want)
		}
	}
	if second := fc.allocate("m2", "10.0.0.10-10.0.0.12/24"); second[0].Static.Address.Addr() != netip.MustParseAddr("10.0.0.11") {
		t.Errorf("second machine got %s, want the next address", second[0].Static.Address)
	}
}

// A used-up range fails the pre-flight and the allocation alike, naming the flag, the range and the way out.
func TestExhausted(t *testing.T) {
	fc := newFakeCluster(t)
	if err := RecordVM(context.Background(), fc.C, fc.allocate("m1", "10.0.0.10-10.0.0.10/24"), fc.vm("m1", nil)); err != nil {
		t.Fatal(err)
	}
	plan := poolPlan(t, "m2", "10.0.0.10-10.0.0.10/24")
	const want = "--harvester-ip-pool: the range 10.0.0.10-10.0.0.10/24 on network default/vlan1 is exhausted: all 1 of its addresses are allocated. " +
		"Remove machines that hold one, or widen the range; the allocations are the ConfigMaps labelled "
	if got := fc.checkProblems(plan, 1); !strings.Contains(got, want) {
		t.Errorf("Check: %q\nwant %q", got, want)
	}
	taken, err := Allocate(context.Background(), fc.C, plan, "this-create")
	if err == nil || !strings.Contains(err.Error(), want) || len(taken) != 0 {
		t.Errorf("Allocate: %v %v\nwant %q", taken, err, want)
	}
}

// Which abandoned allocations an allocation reclaims, and which it leaves to their machine.
func TestReclaim(t *testing.T) {
	const lifetime = 90 * time.Second
	tests := []struct {
		name      string
		uid       string                // recorded VM UID
		setup     func(fc *fakeCluster) // the machine "old" the allocation is for, as it is
		later     time.Duration         // how far the clock has moved on since the allocation
		reclaimed bool
		want      string // in the pre-flight's problem, when not reclaimed
	}{
		{name: "VM gone", uid: "uid-old", reclaimed: true},
		{name: "VM replaced by another of its name", uid: "uid-old", setup: func(fc *fakeCluster) { fc.vm("old", nil) }, reclaimed: true},
		{name: "VM there", setup: func(fc *fakeCluster) { fc.recordUID(fc.vm("old", nil)) }, want: "is exhausted"},
		// A VM deleted in the background is gone before its VMI: the guest still runs with the address.
		{name: "VM gone, VMI shutting down", uid: "uid-old", setup: func(fc *fakeCluster) { fc.ownedVMI("old", "uid-old", nil) }, want: "is exhausted"},
		{name: "create in flight", later: lifetime - 5*time.Second, want: "1 of them to creates still in flight (the first expires at"},
		{name: "create in flight past its lifetime", later: lifetime + 5*time.Second, reclaimed: true},
		// The create was killed between creating the VM and recording it: the VM names the allocation.
		{name: "past its lifetime, VM names it", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vm("old", map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10"})
		}, want: "is exhausted"},
		// A dual-stack machine's VM names both its allocations, comma-separated.
		{name: "past its lifetime, VM names it and its IPv6 one", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vm("old", map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10,default/ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0010"})
		}, want: "is exhausted"},
		{name: "past its lifetime, VM names another", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vm("old", map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-100,default/ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0010"})
		}, reclaimed: true},
		{name: "past its lifetime, VMI names it", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.ownedVMI("old", "uid-x", map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10"})
		}, want: "is exhausted"},
		{name: "VMs cannot be read", uid: "uid-old", setup: func(fc *fakeCluster) {
			fc.KV.PrependReactor("list", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "", errors.New("no"))
			})
		}, want: "is exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			old := fc.abandonedAllocation("10.0.0.10", tt.uid, lifetime)
			if tt.setup != nil {
				tt.setup(fc)
			}
			clockAhead(t, tt.later)
			plan := poolPlan(t, "m1", "10.0.0.10-10.0.0.10/24")
			got := fc.checkProblems(plan, 1)
			if !tt.reclaimed {
				if !strings.Contains(got, tt.want) {
					t.Fatalf("Check: %q, want %q", got, tt.want)
				}
				if got := fc.allocations()[old.Name]; got.UID != old.UID {
					t.Errorf("the allocation was touched")
				}
				return
			}
			if got != "" {
				t.Fatalf("Check: %s", got)
			}
			taken, err := Allocate(context.Background(), fc.C, plan, "this-create")
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			cm := fc.allocations()[old.Name]
			if cm.UID == old.UID || cm.UID != taken[0].UID || cm.Annotations[config.AnnotationIPVM] != "default/m1" {
				t.Errorf("not reclaimed: allocation %v (uid %s, was %s)", cm.Annotations, cm.UID, old.UID)
			}
		})
	}
}

// abandonedAllocation makes the allocation of addr that machine default/old's create left, with its VM's UID
// recorded when uid is set.
func (fc *fakeCluster) abandonedAllocation(addr, uid string, lifetime time.Duration) *corev1.ConfigMap {
	fc.T.Helper()
	plan := poolPlan(fc.T, "old", addr+"-"+addr+"/24")
	cm := plan.Allocation(plan.Static(netip.MustParseAddr(addr), nil), lifetime, "old-create")
	if uid != "" {
		cm.Annotations[config.AnnotationIPVMUID] = uid
	}
	got, err := kube.Create(context.Background(), fc.C, kube.ConfigMaps, "default", cm)
	if err != nil {
		fc.T.Fatal(err)
	}
	return got
}

// recordUID records vm's UID in the allocation of 10.0.0.10, as its create did.
func (fc *fakeCluster) recordUID(vm *kubevirtv1.VirtualMachine) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{config.AnnotationIPVMUID: string(vm.UID)}}})
	if err := kube.MergePatch(context.Background(), fc.C, kube.ConfigMaps, "default", "ip-vlan1-10-0-0-10", patch); err != nil {
		fc.T.Fatal(err)
	}
}

// ownedVMI creates a node driver's VMI named name, owned by a VM of UID owner.
func (fc *fakeCluster) ownedVMI(name, owner string, annotations map[string]string) {
	fc.OK(fc.KV.KubevirtV1().VirtualMachineInstances("default").Create(context.Background(), &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", Labels: map[string]string{config.LabelCreator: config.CreatorName}, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: name, UID: types.UID(owner)}},
	}}, metav1.CreateOptions{}))
}

// clockAhead moves the allocator's clock on by d for the test.
func clockAhead(t *testing.T, d time.Duration) {
	old := Now
	Now = func() time.Time { return time.Now().Add(d) }
	t.Cleanup(func() { Now = old })
}

// Another create took the first free address between this allocation's list and its create: it takes the next.
// A reclaim that loses (the allocation changed since it was read) moves on too.
func TestAllocateLosesARace(t *testing.T) {
	fc := newFakeCluster(t)
	lost := 0
	fc.Dyn.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName(); name == "ip-vlan1-10-0-0-10" {
			lost++
			return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, name)
		}
		return false, nil, nil
	})
	if taken := fc.allocate("m1", "10.0.0.10-10.0.0.11/24"); taken[0].Static.Address.Addr() != netip.MustParseAddr("10.0.0.11") || lost != 1 {
		t.Fatalf("allocated %s after %d lost races; want the next address", taken[0].Static.Address, lost)
	}

	fc = newFakeCluster(t)
	fc.abandonedAllocation("10.0.0.10", "uid-old", time.Minute)
	fc.FailOn("delete", "configmaps", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "ip-vlan1-10-0-0-10", errors.New("precondition failed")))
	if taken := fc.allocate("m1", "10.0.0.10-10.0.0.11/24"); taken[0].Static.Address.Addr() != netip.MustParseAddr("10.0.0.11") {
		t.Fatalf("after a lost reclaim: allocated %s", taken[0].Static.Address)
	}
}

// A machine's release deletes only what is still its own: an allocation reclaimed for another machine stays, and
// so does one that records another VM of the machine's name.
func TestReleaseMachineLeavesOtherMachinesAllocations(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	taken := fc.allocate("m1", "10.0.0.10-10.0.0.11/24")
	vm := fc.vm("m1", nil)
	if err := RecordVM(ctx, fc.C, taken, vm); err != nil {
		t.Fatal(err)
	}
	m1 := config.Ref{Namespace: "default", Name: "m1"}
	if err := ReleaseMachine(ctx, fc.C, "default/vlan1", m1, "uid-of-a-later-vm"); err != nil {
		t.Fatal(err)
	}
	if _, ok := fc.allocations()["ip-vlan1-10-0-0-10"]; !ok {
		t.Fatal("the allocation of another VM of the machine's name was deleted")
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{config.AnnotationIPVM: "default/m9"}}})
	if err := kube.MergePatch(ctx, fc.C, kube.ConfigMaps, "default", "ip-vlan1-10-0-0-10", patch); err != nil {
		t.Fatal(err)
	}
	if err := ReleaseMachine(ctx, fc.C, "default/vlan1", m1, vm.UID); err != nil {
		t.Fatal(err)
	}
	if _, ok := fc.allocations()["ip-vlan1-10-0-0-10"]; !ok {
		t.Fatal("another machine's allocation was deleted")
	}
	if err := ReleaseMachine(ctx, fc.C, "", m1, vm.UID); err != nil {
		t.Errorf("a machine without a pool: %v", err)
	}
}

// The pre-flight asks for the ConfigMap rights in the network's namespace.
func TestCheckAccess(t *testing.T) {
	fc := newFakeCluster(t)
	fc.Denied["create configmaps"], fc.Denied["delete configmaps"] = true, true
	got := fc.checkProblems(poolPlan(t, "m1", "10.0.0.10-10.0.0.11/24"), 1)
	want := "--harvester-ip-pool: the credential may not create configmaps and delete configmaps in namespace default, where the addresses of network default/vlan1 are allocated"
	if !strings.Contains(got, want) {
		t.Fatalf("Check: %q\nwant %q", got, want)
	}
}

// The API server makes an allocation but its answer is lost: the allocation that carries this create's id is
// taken as made; one that carries another create's id is someone else's, and the next address is taken; one that
// cannot be read is named as possibly left, with when it is reclaimed.
func TestAllocateAfterALostAnswer(t *testing.T) {
	saved := kube.TransientBackoff
	kube.TransientBackoff.Duration = time.Millisecond
	t.Cleanup(func() { kube.TransientBackoff = saved })

	fc := newFakeCluster(t)
	lost := fc.LoseAnswer("configmaps")
	taken := fc.allocate("m1", "10.0.0.10-10.0.0.11/24")
	cm := fc.allocations()["ip-vlan1-10-0-0-10"]
	if lost.Load() != 1 || taken[0].UID != cm.UID || cm.Annotations[config.AnnotationCreateID] != "this-create" {
		t.Fatalf("after a lost answer (%d): took %s (uid %s), the allocation %v (uid %s)", lost.Load(), taken[0].Static.Address, taken[0].UID, cm.Annotations, cm.UID)
	}

	fc = newFakeCluster(t)
	fc.Dyn.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName(); name == "ip-vlan1-10-0-0-10" {
			// Another create's allocation, made as this one's answer was lost (through the tracker: the fake is
			// locked while its reactors run).
			plan := poolPlan(t, "m1", "10.0.0.10-10.0.0.10/24")
			theirs, _ := kube.ToUnstructured(kube.ConfigMaps, plan.Allocation(plan.Static(netip.MustParseAddr("10.0.0.10"), nil), time.Minute, "their-create"))
			theirs.SetUID("uid-theirs")
			if err := fc.Dyn.Tracker().Create(a.GetResource(), theirs, "default"); err != nil {
				return true, nil, err
			}
			return true, nil, kubefake.ConnectionReset("Post", "/api/v1/namespaces/default/configmaps")
		}
		return false, nil, nil
	})
	if taken := fc.allocate("m1", "10.0.0.10-10.0.0.11/24"); taken[0].Static.Address.Addr() != netip.MustParseAddr("10.0.0.11") {
		t.Fatalf("the lost address was another create's; allocated %s", taken[0].Static.Address)
	}

	fc = newFakeCluster(t)
	fc.LoseAnswer("configmaps")
	fc.Dyn.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("unavailable")
	})
	_, err := Allocate(context.Background(), fc.C, poolPlan(t, "m1", "10.0.0.10-10.0.0.11/24"), "this-create")
	for _, want := range []string{"cannot allocate address as ConfigMap default/ip-vlan1-10-0-0-10: Harvester at harvester.test:6443 is unreachable",
		"the allocation may have been made all the same and could not be read", "reclaims it 1m30s after its creation"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
