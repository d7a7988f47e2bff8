package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

var (
	ippoolsGVR   = schema.GroupVersionResource{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "ippools"}
	vmnetcfgsGVR = schema.GroupVersionResource{Group: "network.harvesterhci.io", Version: "v1alpha1", Resource: "virtualmachinenetworkconfigs"}
)

// Through the real rancher-machine, with the stand-in of Harvester's managed DHCP (standin.ManagedDHCP, the
// vm-dhcp-controller's handlers): two machines of one HarvesterConfig naming an IPPool of two addresses
// (ipPoolName) are leased the two, once a load-balancer IP pool over the range, which refused a create, is gone;
// each lease is pinned on its VM (static-ip.harvesterhci.io/nic-0) and reported by `ip`; a third is refused by its pre-flight, the pool having no address free; `rm` returns once the controller has
// released the leases. A create that fails after its lease was made (the guest never reports the address) rolls
// back its VM and waits for the release: nothing is left, and the pool holds no lease.
func TestManagedDHCPLeases(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	createVMNetwork(t, b, ns, "lease-net")
	pools := b.Dynamic.Resource(ippoolsGVR).Namespace(ns)
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "network.harvesterhci.io/v1alpha1", "kind": "IPPool",
		"metadata": map[string]any{"name": "lease-net", "namespace": ns},
		"spec": map[string]any{"networkName": ns + "/lease-net", "ipv4Config": map[string]any{
			"cidr": "10.91.0.0/24", "serverIP": "10.91.0.2", "router": "10.91.0.1",
			"pool": map[string]any{"start": "10.91.0.10", "end": "10.91.0.11"}}},
	}}
	if _, err := pools.Create(ctx, pool, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The release comes 3 s after the VM goes, so that rm and the rollback are seen to wait for it.
	dhcp, err := standin.StartManagedDHCP(ctx, b.AdminConfig(), 3*time.Second, ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dhcp.Stop)
	leases := func() map[string]string {
		t.Helper()
		p, err := pools.Get(ctx, "lease-net", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		allocated, _, _ := unstructured.NestedStringMap(p.Object, "status", "ipv4", "allocated")
		out := map[string]string{}
		for addr, mac := range allocated {
			if mac != "RESERVED" && mac != "EXCLUDED" {
				out[addr] = mac
			}
		}
		return out
	}
	waitFor(t, "the managed DHCP takes up IPPool lease-net", func() bool {
		p, err := pools.Get(ctx, "lease-net", metav1.GetOptions{})
		conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
		return err == nil && len(conds) == 3
	}, dhcp.LastError)

	cli := newCLI(t, b.AdminKubeconfig())
	leaseArgs := func(name string, extra ...string) []string {
		return append(createArgs(t, ns, append([]string{"--harvester-network-name", ns + "/lease-net", "--harvester-ip-pool-name", "lease-net"}, extra...)...), name)
	}

	// A load-balancer IP pool of the network that overlaps the IPPool's range refuses the create in its pre-flight.
	lb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "loadbalancer.harvesterhci.io/v1beta1", "kind": "IPPool", "metadata": map[string]any{"name": ns + "-lb"},
		"spec": map[string]any{
			"ranges":   []any{map[string]any{"subnet": "10.91.0.0/24", "rangeStart": "10.91.0.11", "rangeEnd": "10.91.0.40"}},
			"selector": map[string]any{"network": ns + "/lease-net", "scope": []any{map[string]any{"project": "*", "namespace": "*", "guestCluster": "*"}}},
		},
	}}
	if _, err := b.Dynamic.Resource(ipPoolsResource).Create(ctx, lb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := cli.run(leaseArgs("m0")...)
	if want := "--harvester-ip-pool-name: IPPool " + ns + "/lease-net leases 10.91.0.10-10.91.0.11, which overlaps load-balancer IP pool " + ns + "-lb at 10.91.0.11"; r.Err == nil || !strings.Contains(r.Output, want) {
		t.Errorf("a create with a load-balancer pool over the IPPool's range: %s\nwant %q", r, want)
	}
	if err := b.Dynamic.Resource(ipPoolsResource).Delete(ctx, lb.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	config := map[string]any{"apiVersion": "rke-machine-config.cattle.io/v1", "kind": "HarvesterConfig",
		"vmNamespace": ns, "cpuCount": "2", "memorySize": "4", "imageName": "default/ubuntu-22.04", "diskSize": "10",
		"networkName": ns + "/lease-net", "ipPoolName": "lease-net", "createTimeout": "120"}
	names := []string{"gc9-pool1-abcde-m0001", "gc9-pool1-abcde-m0002"}
	got := map[string]string{}
	for _, name := range names {
		rancherCreate(t, cli, b.AdminKubeconfig(), config, "gc9", name)
		ip := cli.must("ip", name).Answer()
		if ip != "10.91.0.10" && ip != "10.91.0.11" {
			t.Errorf("%s: ip %q, want an address of the IPPool's range", name, ip)
		}
		if other, dup := got[ip]; dup {
			t.Errorf("%s and %s both got %s", other, name, ip)
		}
		got[ip] = name
		vm := getVM(t, b, ns, name)
		mac := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress
		if vm.Annotations["static-ip.harvesterhci.io/nic-0"] != ip || vm.Annotations["node-driver.harvesterhci.io/ip-lease-pool"] != ns+"/lease-net" {
			t.Errorf("%s: the VM's annotations do not pin its lease of %s: %v", name, ip, vm.Annotations)
		}
		if l := leases(); l[ip] != mac {
			t.Errorf("%s: the IPPool's leases %v, want %s leased to the first NIC's MAC %s", name, l, ip, mac)
		}
	}

	r = cli.run(leaseArgs("m3")...)
	if r.Err == nil || !strings.Contains(r.Output, "--harvester-ip-pool-name: IPPool "+ns+"/lease-net has no address free") {
		t.Errorf("a third machine of a pool of two: %s", r)
	}

	for _, name := range names {
		cli.must("rm", "-y", name)
	}
	if l := leases(); len(l) > 0 {
		t.Errorf("rm returned with leases left in the IPPool: %v", l)
	}

	// The failed create: its lease made and pinned, the guest never reports it.
	annotateNamespace(t, b, ns, standin.AnnotationInject, standin.InjectNoIP)
	r = cli.run(leaseArgs("m4", "--harvester-create-timeout", "20")...)
	if r.Err == nil || !strings.Contains(r.Output, "timed out after 20s waiting for VM "+ns+"/m4 to run and report an IP") {
		t.Errorf("a create whose guest never reports its lease: %s", r)
	}
	if l := leases(); len(l) > 0 {
		t.Errorf("the failed create returned with leases left in the IPPool: %v", l)
	}
	if cfgs, err := b.Dynamic.Resource(vmnetcfgsGVR).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil || len(cfgs.Items) > 0 {
		t.Errorf("VirtualMachineNetworkConfigs left: %v (%v)", cfgs, err)
	}
	nothingLeft(t, b, ns)
}

// waitFor waits up to a minute until done, and fails the test saying what it awaited and, when lastErr gives one,
// what the stand-in last failed with.
func waitFor(t *testing.T, what string, done func() bool, lastErr func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s (last error: %v)", what, lastErr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
