package harvester

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

func dualPoolOptions(v4, v6 string) config.Options {
	return configtest.With(createOptions(), config.FlagIPPool, v4+","+v6,
		config.FlagIPPoolGateway, "10.0.0.1,2001:db8::1", config.FlagIPPoolDNS, "10.0.0.2,2001:db8::53")
}

// dualStaticGuest is staticGuest for a NIC of several addresses: the guest reports every address its network
// data gives the first NIC's MAC.
func (fc *fakeCluster) dualStaticGuest() vmiShape {
	return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		addrs, ok := fc.staticAddresses(vm)
		if !ok {
			return kubevirtv1.VirtualMachineStatusStopped
		}
		status := healthy("")(vm, vmi)
		if len(addrs) > 0 {
			nic := &vmi.Status.Interfaces[0]
			nic.IPs, nic.IP = addrs, addrs[0]
		}
		return status
	}
}

const (
	alloc4 = "ip-vlan1-10-0-0-10"
	alloc6 = "ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0010"
)

// A dual-stack pool: each machine gets the first free address of each range, both allocated in Harvester and
// recorded with the VM, both in the guest's network data on the one MAC; Remove releases both, and only the
// machine's own.
func TestCreateWithDualStackIPPool(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.dualStaticGuest())
	kubefake.CaptureLog(t)
	opts := dualPoolOptions("10.0.0.10-10.0.0.12/24", "2001:db8::10-2001:db8::12/64")
	d := newTestDriver(t, fc, "m1", opts)
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	if d.IPAddress != "10.0.0.10" || d.IPv6Address != "2001:db8::10" {
		t.Errorf("addresses %q and %q, want each range's first", d.IPAddress, d.IPv6Address)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "default/" + alloc4 + ",default/" + alloc6; vm.Annotations[config.AnnotationIPAllocation] != want {
		t.Errorf("the VM names %q, want %q", vm.Annotations[config.AnnotationIPAllocation], want)
	}
	all := fc.allocations()
	for name, want := range map[string][2]string{alloc4: {"10.0.0.10/24", "10.0.0.10-10.0.0.12/24"}, alloc6: {"2001:db8::10/64", "2001:db8::10-2001:db8::12/64"}} {
		cm, ok := all[name]
		if !ok || cm.Annotations[config.AnnotationIPAddress] != want[0] || cm.Annotations[config.AnnotationIPPool] != want[1] || cm.Annotations[config.AnnotationIPVMUID] != string(vm.UID) {
			t.Errorf("allocation %s: %v (present %v), want address %s of %s recorded with VM uid %s", name, cm.Annotations, ok, want[0], want[1], vm.UID)
		}
	}
	secret, err := kube.Get(context.Background(), fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`- "10.0.0.10/24"`, `- "2001:db8::10/64"`, `via: "10.0.0.1"`, `via: "2001:db8::1"`, `- "2001:db8::53"`} {
		if !strings.Contains(string(secret.Data[objects.SecretKeyNetworkData]), want) {
			t.Errorf("network data lacks %s:\n%s", want, secret.Data[objects.SecretKeyNetworkData])
		}
	}

	m2 := newTestDriver(t, fc, "m2", opts)
	if err := m2.Create(); err != nil || m2.IPAddress != "10.0.0.11" || m2.IPv6Address != "2001:db8::11" {
		t.Fatalf("second machine: %q %q %v, want the next address of each range", m2.IPAddress, m2.IPv6Address, err)
	}
	if err := savedAndLoaded(t, fc, d).Remove(); err != nil {
		t.Fatal(err)
	}
	got := fc.allocations()
	if _, ok := got["ip-vlan1-2001-0db8-0000-0000-0000-0000-0000-0011"]; len(got) != 2 || got["ip-vlan1-10-0-0-11"].Name == "" || !ok {
		t.Errorf("after removing m1 the allocations are %v, want m2's two alone", allocationNames(got))
	}
}

// One range used up: the pre-flight names that range, and a create that took the IPv4 address gives it back.
func TestDualStackIPPoolOneRangeExhausted(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.dualStaticGuest())
	kubefake.CaptureLog(t)
	opts := dualPoolOptions("10.0.0.10-10.0.0.12/24", "2001:db8::10-2001:db8::10/64")
	if err := newTestDriver(t, fc, "m1", opts).Create(); err != nil {
		t.Fatal(err)
	}
	d := newTestDriver(t, fc, "m2", opts)
	for step, run := range map[string]func() error{"PreCreateCheck": d.PreCreateCheck, "Create": d.Create} {
		err := run()
		if err == nil || !strings.Contains(err.Error(), "--harvester-ip-pool: the range 2001:db8::10-2001:db8::10/64 on network default/vlan1 is exhausted: all 1 of its addresses are allocated") ||
			strings.Contains(err.Error(), "10.0.0.10-10.0.0.12/24 on network") {
			t.Errorf("%s: %v", step, err)
		}
	}
	if vms, _, secrets := fc.objects(); vms != 1 || secrets != 1 {
		t.Errorf("the failed create left %d VMs, %d Secrets", vms, secrets)
	}
	if got := fc.allocations(); len(got) != 2 || got[alloc4].Name == "" || got[alloc6].Name == "" {
		t.Errorf("allocations %v, want m1's two alone (m2's IPv4 address released)", allocationNames(got))
	}
}
