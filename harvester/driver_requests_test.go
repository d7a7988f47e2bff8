package harvester

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rancher/machine/libmachine/state"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// instantKubeVirt is KubeVirt answering inside the API server's own handling of the driver's requests, so that
// the fake's action log holds the driver's requests alone: a VM created with a running strategy is stored Running
// with its VMI, which runs with ip on its first NIC, reports a connected guest agent and is owned by the VM as
// KubeVirt makes it (setupVMIFromVM: a controller reference); a deleted VM's VMI goes with it. Nothing here is a
// request of its own.
func (fc *fakeCluster) instantKubeVirt(ip string) {
	tracker := fc.KV.Tracker()
	vmis := kubevirtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	var uids atomic.Int64
	fc.KV.PrependReactor("create", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		vm := a.(k8stesting.CreateAction).GetObject().(*kubevirtv1.VirtualMachine)
		if vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy == kubevirtv1.RunStrategyHalted {
			return false, nil, nil
		}
		if vm.UID == "" { // the object goes on to the tracker with it: the fake's own stamp leaves it
			vm.UID = types.UID(fmt.Sprintf("vm-uid-%d", uids.Add(1)))
			vm.CreationTimestamp = metav1.Now()
		}
		vm.Status.RunStrategy, vm.Status.PrintableStatus = *vm.Spec.RunStrategy, kubevirtv1.VirtualMachineStatusRunning
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace, UID: vm.UID + "-vmi",
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, kubevirtv1.VirtualMachineGroupVersionKind)}}}
		healthy(ip)(vm, vmi)
		return false, nil, tracker.Create(vmis, vmi, vm.Namespace)
	})
	fc.KV.PrependReactor("delete", "virtualmachines", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		_ = tracker.Delete(vmis, d.GetNamespace(), d.GetName())
		return false, nil, nil
	})
}

// createdOnInstantKubeVirt is machine m1, created on a fake Harvester with instantKubeVirt running it at 10.0.0.5.
func createdOnInstantKubeVirt(t *testing.T) (*fakeCluster, *Driver) {
	t.Helper()
	fc := newFakeCluster(t)
	fc.instantKubeVirt("10.0.0.5")
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	return fc, d
}

// requests returns the requests made since the last call, as "verb resource" → count (a subresource after a
// slash; a list or watch of a field-selected name counts as the list or watch it is).
func (fc *fakeCluster) requests() map[string]int {
	got := map[string]int{}
	for _, a := range slices.Concat(fc.KV.Actions(), fc.Dyn.Actions()) {
		key := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			key += "/" + sub
		}
		got[key]++
	}
	fc.KV.ClearActions()
	fc.Dyn.ClearActions()
	return got
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func formatRequests(counts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// The requests of a machine's whole life, call by call, as rancher-machine's RPC client makes the calls: the
// pre-flight, the create, the state right after it, the address, the remove. Each call's requests are pinned, so
// a request added anywhere fails here; the life is at most 24 requests whether the calls share one plugin process
// or each rancher-machine command (create; ip; rm) starts its own from the saved state. The remove reads the VM
// once, updates and deletes it on that read, watches the VM alone until it is gone, and leaves the cloud-init
// Secret to the garbage collector (its VM owns it once a create has finished).
func TestMachineLifeRequests(t *testing.T) {
	preflight := map[string]int{
		"get namespaces": 1, "get virtualmachines": 1, "get secrets": 1, "get virtualmachineimages": 1,
		"list storageclasses": 1, "get network-attachment-definitions": 1, "list resourcequotas": 1,
		"create selfsubjectrulesreviews": 1,
	}
	create := map[string]int{
		"create secrets": 1, "create virtualmachines": 1, "patch secrets": 1,
		"list virtualmachines": 1, "watch virtualmachines": 1, "list virtualmachineinstances": 1, "watch virtualmachineinstances": 1,
	}
	remove := map[string]int{
		"get virtualmachines": 1, "update virtualmachines": 1, "delete virtualmachines": 1,
		"list virtualmachines": 1, "watch virtualmachines": 1,
	}
	for _, tt := range []struct {
		name string
		// apart is each command's own plugin process, loaded from the state rancher-machine saved.
		apart bool
		getIP map[string]int
		life  int
	}{
		{name: "one plugin process", getIP: map[string]int{}, life: 20},
		{name: "a plugin per rancher-machine command", apart: true, getIP: map[string]int{"get virtualmachineinstances": 1}, life: 21},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.instantKubeVirt("10.0.0.5")
			kubefake.CaptureLog(t)
			d := newTestDriver(t, fc, "m1", createOptions())
			later := func() *Driver {
				if tt.apart {
					return savedAndLoaded(t, fc, d)
				}
				return d
			}
			fc.requests()
			life := 0
			for _, step := range []struct {
				call string
				run  func() error
				want map[string]int
			}{
				{"PreCreateCheck", d.PreCreateCheck, preflight},
				{"Create", d.Create, create},
				{"GetState", func() error {
					if s, err := d.GetState(); err != nil || s != state.Running {
						return fmt.Errorf("state %v, %v", s, err)
					}
					return nil
				}, map[string]int{}},
				{"GetIP", func() error {
					if ip, err := later().GetIP(); err != nil || ip != "10.0.0.5" {
						return fmt.Errorf("ip %q, %v", ip, err)
					}
					return nil
				}, tt.getIP},
				{"Remove", func() error { return later().Remove() }, remove},
			} {
				if err := step.run(); err != nil {
					t.Fatalf("%s: %v", step.call, err)
				}
				got := fc.requests()
				life += total(got)
				if !maps.Equal(got, step.want) {
					t.Errorf("%s made %d requests (%s), want %d (%s)", step.call, total(got), formatRequests(got), total(step.want), formatRequests(step.want))
				}
			}
			if life != tt.life || life > 24 {
				t.Errorf("the machine's life made %d requests, want %d (at most 24)", life, tt.life)
			}
			fc.nothingLeft(t)
		})
	}
}

// GetIP in a later command reads the VMI alone when it belongs to the machine's recorded VM; without a VMI, with
// another VM's, or without a recorded UID it reads the VM as well and answers as before.
func TestGetIPReadsTheVMIAlone(t *testing.T) {
	fc, d := createdOnInstantKubeVirt(t)
	fc.requests()
	if ip, err := savedAndLoaded(t, fc, d).GetIP(); err != nil || ip != "10.0.0.5" {
		t.Fatalf("GetIP = %q, %v", ip, err)
	}
	if got := fc.requests(); !maps.Equal(got, map[string]int{"get virtualmachineinstances": 1}) {
		t.Errorf("GetIP with a recorded VM made %s, want the VMI's read alone", formatRequests(got))
	}

	legacy := savedAndLoaded(t, fc, d)
	legacy.VMUID, legacy.CreateID = "", ""
	if ip, err := legacy.GetIP(); err != nil || ip != "10.0.0.5" {
		t.Fatalf("GetIP without ownership records = %q, %v", ip, err)
	}
	if got := fc.requests(); !maps.Equal(got, map[string]int{"get virtualmachines": 1, "get virtualmachineinstances": 1}) {
		t.Errorf("GetIP without a recorded VM made %s, want the VM's and the VMI's reads", formatRequests(got))
	}

	ctx := t.Context()
	vmis := fc.KV.KubevirtV1().VirtualMachineInstances("default")
	vmi, err := vmis.Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.OwnerReferences[0].UID = "another-vm"
	fc.OK(vmis.Update(ctx, vmi, metav1.UpdateOptions{}))
	fc.requests()
	if ip, err := savedAndLoaded(t, fc, d).GetIP(); err != nil || ip != "10.0.0.5" {
		t.Errorf("GetIP with a VMI another VM controls = %q, %v; want the VM read, found the machine's, and its VMI's address", ip, err)
	}
	if got := fc.requests(); !maps.Equal(got, map[string]int{"get virtualmachines": 1, "get virtualmachineinstances": 2}) {
		t.Errorf("GetIP with a VMI another VM controls made %s, want the VM read as well", formatRequests(got))
	}
	fc.OK(nil, vmis.Delete(ctx, "m1", metav1.DeleteOptions{}))
	if _, err := savedAndLoaded(t, fc, d).GetIP(); err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("GetIP without a VMI: %v, want the VM not running", err)
	}
	fc.OK(nil, fc.KV.KubevirtV1().VirtualMachines("default").Delete(ctx, "m1", metav1.DeleteOptions{}))
	if _, err := savedAndLoaded(t, fc, d).GetIP(); err == nil || !strings.Contains(err.Error(), "VirtualMachine default/m1 not found") {
		t.Errorf("GetIP without a VM: %v, want it not found", err)
	}
}
