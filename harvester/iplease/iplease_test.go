package iplease

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// cluster is the shared fake with namespace default and network default/vlan1.
func cluster(t *testing.T) *kubefake.Cluster {
	t.Helper()
	fc := kubefake.New(t, "renew")
	fc.Asked = append(append([]kube.Access{}, Access...), PinAccess, PoolAccess)
	fc.Namespace("default")
	fc.OK(kube.Create(context.Background(), fc.C, kube.Networks, "default", &kube.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Name: "vlan1", Namespace: "default"}}))
	return fc
}

// readyPool is an IPPool of network default/vlan1 leasing 10.0.0.10 to 10.0.0.19, whose DHCP server is 10.0.0.2
// (outside the range) and router 10.0.0.1, as Harvester's UI makes one.
func readyPool() *kube.NetworkIPPool {
	return &kube.NetworkIPPool{ObjectMeta: metav1.ObjectMeta{Name: "vlan1", Namespace: "default"},
		Spec: kube.NetworkIPPoolSpec{NetworkName: "default/vlan1", IPv4Config: kube.IPv4Config{CIDR: "10.0.0.0/24", ServerIP: "10.0.0.2", Router: "10.0.0.1",
			Pool: kube.IPv4Range{Start: "10.0.0.10", End: "10.0.0.19"}}}}
}

// leasePlan is the lease plan of machine m1 with --harvester-ip-pool-name vlan1 and the flags of kv.
func leasePlan(t *testing.T, kv ...any) *objects.LeasePlan {
	t.Helper()
	_, m, err := objects.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), append([]any{config.FlagIPPoolName, "vlan1"}, kv...)...))
	if err != nil {
		t.Fatal(err)
	}
	return m.Lease
}

// The pre-flight finds the pool's range and its free addresses: the range's, less the leased, the excluded and the
// DHCP server's and router's when they lie in it.
func TestCheckFindsTheFreeAddresses(t *testing.T) {
	fc := cluster(t)
	pool := readyPool()
	pool.Spec.IPv4Config.ServerIP, pool.Spec.IPv4Config.Pool.Exclude = "10.0.0.10", []string{"10.0.0.11", "10.0.0.99"}
	pool.Status.IPv4 = &kube.IPv4Status{Allocated: map[string]string{"10.0.0.12": "02:00:00:00:00:01", "10.0.0.10": kube.ReservedMark, "10.0.0.11": kube.ExcludedMark}}
	fc.ManagedDHCP(pool)
	r := Check(context.Background(), fc.C, leasePlan(t), 7)
	if len(r.Problems.List) > 0 || len(r.Unchecked) > 0 || r.Pool == nil {
		t.Fatalf("problems %v, unchecked %v", r.Problems.List, r.Unchecked)
	}
	if p := r.Pool; p.Size != 10 || p.Free != 7 || p.Ref.String() != "default/vlan1" || p.Network != "default/vlan1" ||
		p.Subnet.String() != "10.0.0.0/24" || p.First.String() != "10.0.0.10" || p.Last.String() != "10.0.0.19" {
		t.Errorf("found %+v; want IPPool default/vlan1 on network default/vlan1, 10.0.0.10-10.0.0.19 of 10.0.0.0/24, 7 of 10 free", *p)
	}
	r = Check(context.Background(), fc.C, leasePlan(t), 8)
	if r.Pool != nil || len(r.Problems.List) != 1 || !strings.Contains(r.Problems.List[0].Message, "IPPool default/vlan1 has 7 of its 10 addresses free, 8 machines need one each") {
		t.Errorf("8 machines: %v", r.Problems.List)
	}
}

// Each reason an IPPool cannot lease the machines an address is a problem of --harvester-ip-pool-name, saying
// what to do; reads the credential may not make leave the check unchecked, not failed.
func TestCheckRefuses(t *testing.T) {
	for _, tt := range []struct {
		name      string
		pool      func(*kube.NetworkIPPool)
		setup     func(*kubefake.Cluster)
		cfg       []any
		want      string
		unchecked string
	}{
		{name: "no such pool", cfg: []any{config.FlagIPPoolName, "other"},
			want: "IPPool default/other does not exist in Harvester; name the IPPool of Harvester's managed DHCP that serves network default/vlan1"},
		{name: "another network's", pool: func(p *kube.NetworkIPPool) { p.Spec.NetworkName = "vlan2" },
			want: "IPPool default/vlan1 serves network default/vlan2, not the first NIC's network default/vlan1"},
		{name: "the network names another pool", setup: func(fc *kubefake.Cluster) {
			nad, _ := kube.Get(context.Background(), fc.C, kube.Networks, "default", "vlan1")
			nad.Labels[kube.LabelIPPoolName] = "newer"
			fc.OK(kube.Update(context.Background(), fc.C, kube.Networks, "default", nad))
		}, want: "network default/vlan1 is served by IPPool default/newer"},
		{name: "not taken up", setup: func(fc *kubefake.Cluster) {
			nad, _ := kube.Get(context.Background(), fc.C, kube.Networks, "default", "vlan1")
			nad.Labels = nil
			fc.OK(kube.Update(context.Background(), fc.C, kube.Networks, "default", nad))
		}, want: "the vm-dhcp-controller has not taken up IPPool default/vlan1"},
		{name: "paused", pool: func(p *kube.NetworkIPPool) { p.Spec.Paused = new(bool); *p.Spec.Paused = true }, want: "IPPool default/vlan1 is paused"},
		{name: "no DHCP server", setup: func(fc *kubefake.Cluster) {
			p, _ := kube.Get(context.Background(), fc.C, kube.NetworkIPPools, "default", "vlan1")
			p.Status.Conditions[1] = kube.Condition{Type: "AgentReady", Status: corev1.ConditionFalse, Reason: "Error", Message: "agent pod vlan1-agent not ready"}
			fc.OK(kube.Update(context.Background(), fc.C, kube.NetworkIPPools, "default", p))
		}, want: "its DHCP server (the vm-dhcp-controller's agent) is not ready, so guests would get no lease (condition AgentReady False (Error agent pod vlan1-agent not ready))"},
		{name: "a range off its subnet", pool: func(p *kube.NetworkIPPool) { p.Spec.IPv4Config.Pool.End = "10.0.1.5" },
			want: `has the range "10.0.0.10" to "10.0.1.5", which is not a range of its subnet 10.0.0.0/24`},
		{name: "exhausted", pool: func(p *kube.NetworkIPPool) {
			p.Spec.IPv4Config.Pool.End = "10.0.0.11"
			p.Status.IPv4 = &kube.IPv4Status{Allocated: map[string]string{"10.0.0.10": "02:00:00:00:00:01", "10.0.0.11": "02:00:00:00:00:02"}}
		}, want: "IPPool default/vlan1 has no address free: all 2 of 10.0.0.10-10.0.0.11 are leased, excluded or reserved"},
		{name: "may not wait for the lease", setup: func(fc *kubefake.Cluster) { fc.Denied["watch virtualmachinenetworkconfigs"] = true },
			want: "the credential may not watch virtualmachinenetworkconfigs in namespace default, which a create needs to wait for the machine's lease"},
		{name: "may not read the pool", setup: func(fc *kubefake.Cluster) {
			fc.FailOn("get", "ippools", apierrors.NewForbidden(schema.GroupResource{Group: "network.harvesterhci.io", Resource: "ippools"}, "vlan1", errors.New("RBAC")))
		}, unchecked: "the credential may not get ippools.network.harvesterhci.io in namespace default: cannot tell whether IPPool default/vlan1 serves network default/vlan1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := cluster(t)
			pool := readyPool()
			if tt.pool != nil {
				tt.pool(pool)
			}
			fc.ManagedDHCP(pool)
			if tt.setup != nil {
				tt.setup(fc)
			}
			r := Check(context.Background(), fc.C, leasePlan(t, tt.cfg...), 1)
			if tt.unchecked != "" {
				if len(r.Unchecked) != 1 || !strings.Contains(r.Unchecked[0], tt.unchecked) || len(r.Problems.List) > 0 {
					t.Errorf("unchecked %v, problems %v; want unchecked %q", r.Unchecked, r.Problems.List, tt.unchecked)
				}
				return
			}
			if r.Pool != nil || len(r.Problems.List) != 1 || r.Problems.List[0].Flag != config.FlagIPPoolName || !strings.Contains(r.Problems.List[0].Message, tt.want) {
				t.Errorf("pool %v, problems %v; want one under --%s saying %q", r.Pool, r.Problems.List, config.FlagIPPoolName, tt.want)
			}
		})
	}
}

// createVM makes VM default/name in the fake, as the create does, and returns it with its UID.
func createVM(t *testing.T, fc *kubefake.Cluster, name, mac string) *kubevirtv1.VirtualMachine {
	t.Helper()
	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{}},
		Spec: kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain:   kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Interfaces: []kubevirtv1.Interface{{Name: "nic-0", MacAddress: mac}}}},
			Networks: []kubevirtv1.Network{{Name: "nic-0", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "default/vlan1"}}}},
		}}}}
	got, err := fc.KV.KubevirtV1().VirtualMachines("default").Create(context.Background(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The create waits for the controller's lease of its VM's MAC, then pins it; removing the VM releases it, and the
// wait for the release ends. Two VMs get two addresses.
func TestLeasePinRelease(t *testing.T) {
	fc := cluster(t)
	kubefake.CaptureLog(t)
	fc.ManagedDHCP(readyPool())
	// A bound for a test that hangs, not a timing assertion: the fake controller runs on the test's watch.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vm := createVM(t, fc, "m1", "02:aa:00:00:00:01")
	addr, err := AwaitLease(ctx, fc.C, vm, "02:AA:00:00:00:01")
	if err != nil || addr != netip.MustParseAddr("10.0.0.10") {
		t.Fatalf("AwaitLease: %v %v, want the pool's first free address", addr, err)
	}
	if err := Pin(ctx, fc.C, vm, addr); err != nil {
		t.Fatal(err)
	}
	pinned, _ := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if pinned.Annotations["static-ip.harvesterhci.io/nic-0"] != "10.0.0.10" {
		t.Errorf("the VM is not pinned: %v", pinned.Annotations)
	}
	vm2 := createVM(t, fc, "m2", "02:aa:00:00:00:02")
	if addr2, err := AwaitLease(ctx, fc.C, vm2, vm2.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress); err != nil || addr2 == addr {
		t.Errorf("second VM: %v %v", addr2, err)
	}
	if err := fc.KV.KubevirtV1().VirtualMachines("default").Delete(ctx, "m1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := AwaitRelease(ctx, fc.C, "default", "m1", vm.UID); err != nil {
		t.Fatal(err)
	}
	pool, _ := kube.Get(ctx, fc.C, kube.NetworkIPPools, "default", "vlan1")
	if _, held := pool.Status.IPv4.Allocated["10.0.0.10"]; held || len(pool.Status.IPv4.Allocated) != 1 {
		t.Errorf("after the release the pool holds %v, want m2's lease alone", pool.Status.IPv4.Allocated)
	}
}

// A lease the controller does not make ends the wait when the create's time is up, saying what it last saw: the
// condition the controller left; the config of an earlier VM of the same name is not this VM's lease.
func TestAwaitLeaseSaysWhatItSaw(t *testing.T) {
	fc := cluster(t)
	pool := readyPool()
	pool.Spec.IPv4Config.Pool.End = "10.0.0.10"
	pool.Status.IPv4 = &kube.IPv4Status{Allocated: map[string]string{"10.0.0.10": "02:00:00:00:00:09"}}
	fc.ManagedDHCP(pool)
	vm := createVM(t, fc, "m1", "02:aa:00:00:00:01")
	// The wait below ends by its deadline, so the controller's answer is awaited first: what the wait saw last
	// does not depend on how busy the machine is.
	kubefake.Eventually(t, "the controller's answer", func() bool {
		cfg, err := kube.Get(context.Background(), fc.C, kube.VMNetworkConfigs, "default", "m1")
		return err == nil && len(cfg.Status.Conditions) > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := AwaitLease(ctx, fc.C, vm, "02:aa:00:00:00:01")
	configtest.WantAll(t, fmt.Sprint(err), "no lease of Harvester's managed DHCP for the first NIC (MAC 02:aa:00:00:00:01) of VM default/m1",
		"last seen: its VirtualMachineNetworkConfig, leases: none; condition Allocated False: no more ip addresses left in network default/vlan1 ipam",
		"kubectl -n default get virtualmachinenetworkconfig m1 -o yaml")

	other := *vm
	other.UID = "uid-of-a-later-vm"
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := AwaitLease(ctx, fc.C, &other, "02:aa:00:00:00:01"); !strings.Contains(fmt.Sprint(err), "last seen: the VirtualMachineNetworkConfig of another VM of that name") {
		t.Errorf("another VM's config: %v", err)
	}
}
