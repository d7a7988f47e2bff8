package harvester

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// leasePool is an IPPool of Harvester's managed DHCP for network default/vlan1, leasing 10.0.0.10 to last.
func leasePool(last string) *kube.NetworkIPPool {
	return &kube.NetworkIPPool{ObjectMeta: metav1.ObjectMeta{Name: "vlan1", Namespace: "default"},
		Spec: kube.NetworkIPPoolSpec{NetworkName: "default/vlan1", IPv4Config: kube.IPv4Config{CIDR: "10.0.0.0/24", ServerIP: "10.0.0.2", Router: "10.0.0.1",
			Pool: kube.IPv4Range{Start: "10.0.0.10", End: last}}}}
}

func leaseCreateOptions(kv ...any) config.Options {
	return configtest.With(createOptions(), append([]any{config.FlagIPPoolName, "vlan1"}, kv...)...)
}

// leaseHeld reports whether the fake's pool holds address a.
func leaseHeld(t *testing.T, fc *fakeCluster, a string) bool {
	t.Helper()
	pool, err := kube.Get(context.Background(), fc.C, kube.NetworkIPPools, "default", "vlan1")
	if err != nil {
		t.Fatal(err)
	}
	_, held := pool.Status.IPv4.Allocated[a]
	return held
}

// A machine with --harvester-ip-pool-name passes the pre-flight, gets the MAC the lease is bound to on its first
// NIC and the DHCP entry for it in its network data, waits for the managed DHCP's lease and pins it on the VM;
// its saved state names the pool, and Remove returns once the lease is released.
func TestCreateWithLeasePool(t *testing.T) {
	fc := newFakeCluster(t)
	fc.Asked = append(fc.Asked, iplease.Access...)
	fc.ManagedDHCP(leasePool("10.0.0.19"))
	fc.kubeVirt(healthy("10.0.0.10")) // the guest takes its lease by DHCP: the pool's first free address
	kubefake.CaptureLog(t)
	ctx := context.Background()
	d := newTestDriver(t, fc, "m1", leaseCreateOptions())
	checks, err := PreflightPool(ctx, "m1", leaseCreateOptions(), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks.Checks {
		if c.Name == preflight.CheckIPPool && (c.Read != "of the lease plan: IPPool default/vlan1 on network default/vlan1" ||
			c.Detail != "it leases 10.0.0.10-10.0.0.19 of 10.0.0.0/24, 10 of its 10 addresses free") {
			t.Errorf("IP pool check: %+v", c)
		}
	}
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mac := objects.LeaseMAC(config.Ref{Namespace: "default", Name: "vlan1"}, config.Ref{Namespace: "default", Name: "m1"}, d.CreateID)
	if got := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress; got != mac {
		t.Errorf("first NIC's MAC %q, want the lease's %q", got, mac)
	}
	if vm.Annotations[config.AnnotationStaticIP] != "10.0.0.10" || vm.Annotations[config.AnnotationIPLeasePool] != "default/vlan1" {
		t.Errorf("the VM does not pin its lease: %v", vm.Annotations)
	}
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	configtest.WantAll(t, string(secret.Data[objects.SecretKeyNetworkData]), `macaddress: "`+mac+`"`, "dhcp4: true")
	if ip, err := d.GetIP(); err != nil || ip != "10.0.0.10" {
		t.Errorf("GetIP: %q %v", ip, err)
	}

	rm := savedAndLoaded(t, fc, d)
	if rm.IPLeasePool != "default/vlan1" {
		t.Fatalf("the saved state does not name the pool: %q", rm.IPLeasePool)
	}
	if err := rm.Remove(); err != nil {
		t.Fatal(err)
	}
	if leaseHeld(t, fc, "10.0.0.10") {
		t.Error("Remove returned before the lease was released")
	}
	fc.nothingLeft(t)
}

// A failed create leaves no lease: the rollback removes the VM and returns once the managed DHCP has released it.
// A lease that is never made ends the create when its time is up, saying so.
func TestLeaseRollback(t *testing.T) {
	fc := newFakeCluster(t)
	fc.ManagedDHCP(leasePool("10.0.0.19"))
	fc.kubeVirt(healthy("")) // the guest never reports its address
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", leaseCreateOptions(config.FlagCreateTimeout, "2"))
	if err := d.Create(); err == nil || strings.Contains(err.Error(), "cleanup after it also failed") {
		t.Fatalf("Create: %v, want a timeout and a clean rollback", err)
	}
	if leaseHeld(t, fc, "10.0.0.10") {
		t.Error("the failed create left its lease")
	}
	fc.nothingLeft(t)

	fc = newFakeCluster(t)
	dhcp := fc.ManagedDHCP(leasePool("10.0.0.19"))
	dhcp.Down.Store(true)
	fc.kubeVirt(nil)
	d = newTestDriver(t, fc, "m1", leaseCreateOptions(config.FlagCreateTimeout, "1"))
	err := d.Create()
	configtest.WantAll(t, err.Error(), "no lease of Harvester's managed DHCP for the first NIC", "last seen: no VirtualMachineNetworkConfig",
		"Check that the vm-dhcp-controller add-on is enabled")
	fc.nothingLeft(t)
}

// A lease the managed DHCP does not release fails Remove, after a bounded wait, saying what holds it; once the
// add-on releases it, a second Remove succeeds.
func TestRemoveWaitsForTheRelease(t *testing.T) {
	fc := newFakeCluster(t)
	dhcp := fc.ManagedDHCP(leasePool("10.0.0.19"))
	fc.kubeVirt(healthy("10.0.0.10"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", leaseCreateOptions())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	saved := leaseReleaseTimeout
	leaseReleaseTimeout = 200 * time.Millisecond
	t.Cleanup(func() { leaseReleaseTimeout = saved })
	dhcp.Down.Store(true)
	rm := savedAndLoaded(t, fc, d)
	err := rm.Remove()
	if err == nil {
		t.Fatal("Remove succeeded with the lease held")
	}
	configtest.WantAll(t, err.Error(), "the lease of VM default/m1 is not released", "its VirtualMachineNetworkConfig, leases: Allocated 10.0.0.10",
		"The vm-dhcp-controller add-on releases it once the VM is gone")
	if _, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(context.Background(), "m1", metav1.GetOptions{}); err == nil {
		t.Error("the VM is still there")
	}
	// The add-on comes back and catches up with the deleted VM; rm, retried, succeeds.
	dhcp.Down.Store(false)
	dhcp.Resync()
	if err := rm.Remove(); err != nil || leaseHeld(t, fc, "10.0.0.10") {
		t.Errorf("Remove once the add-on released the lease: %v", err)
	}
}
