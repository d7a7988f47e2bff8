package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
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
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

func poolCreateOptions(pool string) config.Options {
	return configtest.With(createOptions(), config.FlagIPPool, pool, config.FlagIPPoolGateway, "10.0.0.1", config.FlagIPPoolDNS, "10.0.0.2")
}

// staticGuest is a guest that configures its network from the network data in its cloud-init Secret, as
// cloud-init does, and reports the first NIC's static address through the guest agent.
func (fc *fakeCluster) staticGuest() vmiShape {
	return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		addrs, ok := fc.staticAddresses(vm)
		if !ok {
			return kubevirtv1.VirtualMachineStatusStopped
		}
		if len(addrs) > 0 {
			return healthy(addrs[0])(vm, vmi)
		}
		return healthy("")(vm, vmi)
	}
}

// staticAddresses are the addresses (without prefix) that the network data in vm's cloud-init Secret gives its
// first NIC's MAC; false when the guest has no Secret.
func (fc *fakeCluster) staticAddresses(vm *kubevirtv1.VirtualMachine) ([]string, bool) {
	secret, err := kube.Get(context.Background(), fc.c, kube.Secrets, vm.Namespace, objects.CloudInitSecretName(vm.Name))
	if err != nil {
		fc.t.Errorf("the guest has no cloud-init Secret: %v", err)
		return nil, false
	}
	var doc struct {
		Ethernets map[string]struct {
			Match     struct{ MACAddress string } `yaml:"match"`
			Addresses []string                    `yaml:"addresses"`
		} `yaml:"ethernets"`
	}
	if err := yaml.Unmarshal(secret.Data[objects.SecretKeyNetworkData], &doc); err != nil {
		fc.t.Errorf("network data: %v", err)
	}
	mac := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress
	var addrs []string
	for _, e := range doc.Ethernets {
		if e.Match.MACAddress == mac {
			for _, a := range e.Addresses {
				addr, _, _ := strings.Cut(a, "/")
				addrs = append(addrs, addr)
			}
		}
	}
	return addrs, true
}

// allocations returns the address allocations in namespace default, by name.
func (fc *fakeCluster) allocations() map[string]corev1.ConfigMap {
	list, err := kube.List(context.Background(), fc.c, kube.ConfigMaps, "default", metav1.ListOptions{})
	if err != nil {
		fc.t.Fatal(err)
	}
	out := map[string]corev1.ConfigMap{}
	for _, cm := range list {
		out[cm.Name] = cm
	}
	return out
}

// savedAndLoaded is the driver as a later rancher-machine command loads it: only its saved state.
func savedAndLoaded(t *testing.T, fc *fakeCluster, d *Driver) *Driver {
	t.Helper()
	state, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	out := NewDriver("", "")
	if err := json.Unmarshal(state, out); err != nil {
		t.Fatal(err)
	}
	out.clients = fc.c
	return out
}

// A machine with a pool: the first address is allocated in Harvester, recorded with its VM, given to the guest
// as network-config v2 on a MAC the VM's first interface gets, reported by GetIP, and released by Remove.
func TestCreateWithIPPool(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	captureLog(t)
	ctx := context.Background()
	d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.12/24"))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	if ip, err := d.GetIP(); err != nil || ip != "10.0.0.10" || d.IPAddress != "10.0.0.10" {
		t.Errorf("GetIP: %q %v (recorded %q), want the pool's first address", ip, err, d.IPAddress)
	}

	vm, err := fc.kv.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mac := objects.StaticMAC(config.Ref{Namespace: "default", Name: "vlan1"}, netip.MustParseAddr("10.0.0.10"))
	if got := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress; got != mac {
		t.Errorf("first interface MAC %q, want %q", got, mac)
	}
	if vm.Annotations[config.AnnotationIPAllocation] != "default/ip-vlan1-10-0-0-10" || vm.Spec.Template.ObjectMeta.Annotations[config.AnnotationIPAllocation] != "default/ip-vlan1-10-0-0-10" {
		t.Errorf("the VM does not name its allocation: %v", vm.Annotations)
	}
	cm, ok := fc.allocations()["ip-vlan1-10-0-0-10"]
	if !ok {
		t.Fatalf("no allocation: %v", fc.allocations())
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
	secret, err := kube.Get(ctx, fc.c, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`macaddress: "` + mac + `"`, `- "10.0.0.10/24"`, `via: "10.0.0.1"`, `- "10.0.0.2"`} {
		if !strings.Contains(string(secret.Data[objects.SecretKeyNetworkData]), want) {
			t.Errorf("network data lacks %s:\n%s", want, secret.Data[objects.SecretKeyNetworkData])
		}
	}

	m2 := newTestDriver(t, fc, "m2", poolCreateOptions("10.0.0.10-10.0.0.12/24"))
	if err := m2.Create(); err != nil || m2.IPAddress != "10.0.0.11" {
		t.Fatalf("second machine: %q %v, want the next address", m2.IPAddress, err)
	}

	rm := savedAndLoaded(t, fc, d)
	if rm.IPPoolNetwork != "default/vlan1" {
		t.Fatalf("the saved state does not say where the address is: %q", rm.IPPoolNetwork)
	}
	if err := rm.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := fc.allocations(); len(got) != 1 || got["ip-vlan1-10-0-0-11"].Name == "" {
		t.Errorf("after removing m1 the allocations are %v, want m2's alone", allocationNames(got))
	}
	if err := rm.Remove(); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
}

func allocationNames(m map[string]corev1.ConfigMap) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A used-up range fails the pre-flight and the create, naming the flag and saying so; the create leaves nothing.
func TestIPPoolExhausted(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	captureLog(t)
	if err := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.10/24")).Create(); err != nil {
		t.Fatal(err)
	}
	d := newTestDriver(t, fc, "m2", poolCreateOptions("10.0.0.10-10.0.0.10/24"))
	for step, run := range map[string]func() error{"PreCreateCheck": d.PreCreateCheck, "Create": d.Create} {
		err := run()
		if err == nil || !strings.Contains(err.Error(), "--harvester-ip-pool: the range 10.0.0.10-10.0.0.10/24 on network default/vlan1 is exhausted: all 1 of its addresses are allocated") {
			t.Errorf("%s: %v", step, err)
		}
	}
	if vms, _, secrets := fc.objects(); vms != 1 || secrets != 1 || len(fc.allocations()) != 1 {
		t.Errorf("the failed create left something: %d VMs, %d Secrets, allocations %v", vms, secrets, allocationNames(fc.allocations()))
	}
}

// Which abandoned allocations the next allocation reclaims, and which it leaves to their machine.
func TestIPPoolReclaim(t *testing.T) {
	const lifetime = 90 * time.Second
	tests := []struct {
		name      string
		uid       string                // recorded VM UID
		setup     func(fc *fakeCluster) // the machine "old" the allocation is for, as it is
		later     time.Duration         // how far the clock has moved on since the allocation
		reclaimed bool
		want      string // in the pre-flight's error, when not reclaimed
	}{
		{name: "VM gone", uid: "uid-old", reclaimed: true},
		{name: "VM replaced by another of its name", uid: "uid-old", setup: func(fc *fakeCluster) { fc.vmWithVolumes("old", nil, nil) }, reclaimed: true},
		{name: "VM there", setup: func(fc *fakeCluster) { fc.recordUID(fc.vmWithVolumes("old", nil, nil)) }, want: "is exhausted"},
		// A VM deleted in the background is gone before its VMI: the guest still runs with the address.
		{name: "VM gone, VMI shutting down", uid: "uid-old", setup: func(fc *fakeCluster) { fc.ownedVMI("old", "uid-old", nil) }, want: "is exhausted"},
		{name: "create in flight", later: lifetime - 5*time.Second, want: "1 of them to creates still in flight (the first expires at"},
		{name: "create in flight past its lifetime", later: lifetime + 5*time.Second, reclaimed: true},
		// The create was killed between creating the VM and recording it: the VM names the allocation.
		{name: "past its lifetime, VM names it", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vmWithVolumes("old", nil, map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10"})
		}, want: "is exhausted"},
		// A dual-stack machine's VM names both its allocations, comma-separated.
		{name: "past its lifetime, VM names it and its IPv6 one", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vmWithVolumes("old", nil, map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10,default/ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0010"})
		}, want: "is exhausted"},
		{name: "past its lifetime, VM names another", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.vmWithVolumes("old", nil, map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-100,default/ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0010"})
		}, reclaimed: true},
		{name: "past its lifetime, VMI names it", later: time.Hour, setup: func(fc *fakeCluster) {
			fc.ownedVMI("old", "uid-x", map[string]string{config.AnnotationIPAllocation: "default/ip-vlan1-10-0-0-10"})
		}, want: "is exhausted"},
		{name: "VMs cannot be read", uid: "uid-old", setup: func(fc *fakeCluster) {
			fc.kv.PrependReactor("list", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "", errors.New("no"))
			})
		}, want: "is exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(fc.staticGuest())
			captureLog(t)
			old := fc.abandonedAllocation("10.0.0.10", tt.uid, lifetime)
			if tt.setup != nil {
				tt.setup(fc)
			}
			clockAhead(t, tt.later)
			d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.10/24"))
			err := d.PreCreateCheck()
			if !tt.reclaimed {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("PreCreateCheck: %v, want %q", err, tt.want)
				}
				if got := fc.allocations()[old.Name]; got.UID != old.UID {
					t.Errorf("the allocation was touched")
				}
				return
			}
			if err != nil {
				t.Fatalf("PreCreateCheck: %v", err)
			}
			if err := d.Create(); err != nil {
				t.Fatalf("Create: %v", err)
			}
			got := fc.allocations()[old.Name]
			if got.UID == old.UID || got.Annotations[config.AnnotationIPVM] != "default/m1" || d.IPAddress != "10.0.0.10" {
				t.Errorf("not reclaimed: allocation %v (uid %s, was %s), IP %q", got.Annotations, got.UID, old.UID, d.IPAddress)
			}
		})
	}
}

// abandonedAllocation makes the allocation of addr that machine default/old's create left, with its VM's UID
// recorded when uid is set.
func (fc *fakeCluster) abandonedAllocation(addr, uid string, lifetime time.Duration) *corev1.ConfigMap {
	fc.t.Helper()
	cfg, err := config.ParseConfig("old", poolCreateOptions(addr+"-"+addr+"/24"))
	if err != nil {
		fc.t.Fatal(err)
	}
	cm := objects.Allocation(cfg, objects.StaticAddressFor(cfg, netip.MustParseAddr(addr)), lifetime)
	if uid != "" {
		cm.Annotations[config.AnnotationIPVMUID] = uid
	}
	got, err := kube.Create(context.Background(), fc.c, kube.ConfigMaps, "default", cm)
	if err != nil {
		fc.t.Fatal(err)
	}
	return got
}

// recordUID records vm's UID in the allocation of 10.0.0.10, as its create did.
func (fc *fakeCluster) recordUID(vm *kubevirtv1.VirtualMachine) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{config.AnnotationIPVMUID: string(vm.UID)}}})
	if err := kube.MergePatch(context.Background(), fc.c, kube.ConfigMaps, "default", "ip-vlan1-10-0-0-10", patch); err != nil {
		fc.t.Fatal(err)
	}
}

// ownedVMI creates a node driver's VMI named name, owned by a VM of UID owner.
func (fc *fakeCluster) ownedVMI(name, owner string, annotations map[string]string) {
	fc.ok(fc.kv.KubevirtV1().VirtualMachineInstances("default").Create(context.Background(), &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", Labels: map[string]string{config.LabelCreator: config.CreatorName}, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: name, UID: types.UID(owner)}},
	}}, metav1.CreateOptions{}))
}

// clockAhead moves the driver's clock on by d for the test.
func clockAhead(t *testing.T, d time.Duration) {
	old := ippool.Now
	ippool.Now = func() time.Time { return time.Now().Add(d) }
	t.Cleanup(func() { ippool.Now = old })
}

// Another create took the first free address between this create's list and its create: it takes the next.
func TestIPPoolLosesARace(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	captureLog(t)
	lost := 0
	fc.dyn.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(runtime.Unstructured)
		if name, _, _ := unstructuredName(obj); name == "ip-vlan1-10-0-0-10" {
			lost++
			return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, name)
		}
		return false, nil, nil
	})
	d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
	if err := d.Create(); err != nil || d.IPAddress != "10.0.0.11" || lost != 1 {
		t.Fatalf("Create: %v, IP %q after %d lost races; want the next address", err, d.IPAddress, lost)
	}
	// A reclaim that loses (the allocation changed since it was read) moves on too.
	fc2 := newFakeCluster(t)
	fc2.kubeVirt(fc2.staticGuest())
	fc2.abandonedAllocation("10.0.0.10", "uid-old", time.Minute)
	fc2.failOn("delete", "configmaps", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "ip-vlan1-10-0-0-10", errors.New("precondition failed")))
	d2 := newTestDriver(t, fc2, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
	if err := d2.Create(); err != nil || d2.IPAddress != "10.0.0.11" {
		t.Fatalf("after a lost reclaim: %v, IP %q", err, d2.IPAddress)
	}
}

func unstructuredName(obj runtime.Unstructured) (string, bool, error) {
	m, ok := obj.UnstructuredContent()["metadata"].(map[string]any)
	if !ok {
		return "", false, nil
	}
	name, ok := m["name"].(string)
	return name, ok, nil
}

// A failed create releases its address with everything else; so does one that cannot record its VM.
func TestIPPoolReleasedOnRollback(t *testing.T) {
	for _, w := range []struct{ verb, resource string }{{"create", "virtualmachines"}, {"patch", "configmaps"}, {"create", "secrets"}} {
		t.Run(w.verb+" "+w.resource, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(fc.staticGuest())
			captureLog(t)
			d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
			fc.failOn(w.verb, w.resource, apierrors.NewInternalError(errors.New("injected failure")))
			if err := d.Create(); err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Create: %v", err)
			}
			fc.nothingLeft(t)
			if got := fc.allocations(); len(got) != 0 {
				t.Errorf("the address is still allocated: %v", allocationNames(got))
			}
		})
	}
}

// Remove releases only what is still this machine's: an allocation reclaimed for another machine stays.
func TestRemoveLeavesOtherMachinesAllocations(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	captureLog(t)
	d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{config.AnnotationIPVM: "default/m9"}}})
	if err := kube.MergePatch(context.Background(), fc.c, kube.ConfigMaps, "default", "ip-vlan1-10-0-0-10", patch); err != nil {
		t.Fatal(err)
	}
	if err := savedAndLoaded(t, fc, d).Remove(); err != nil {
		t.Fatal(err)
	}
	if _, ok := fc.allocations()["ip-vlan1-10-0-0-10"]; !ok {
		t.Errorf("another machine's allocation was deleted")
	}
}

// The pre-flight asks for the ConfigMap rights in the network's namespace.
func TestPreCreateCheckIPPoolAccess(t *testing.T) {
	fc := newFakeCluster(t)
	captureLog(t)
	fc.denied["create configmaps"], fc.denied["delete configmaps"] = true, true
	err := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24")).PreCreateCheck()
	want := "--harvester-ip-pool: the credential may not create configmaps and delete configmaps in namespace default, where the addresses of network default/vlan1 are allocated"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("PreCreateCheck: %v\nwant %q", err, want)
	}
}
