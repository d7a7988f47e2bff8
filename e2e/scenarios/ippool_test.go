package scenarios

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/log"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/apiproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// allocationSelector selects the node driver's static-address allocations.
const allocationSelector = "harvesterhci.io/creator=docker-machine-driver-harvester"

// Through the real rancher-machine: a machine with --harvester-ip-pool gets the range's first address, allocated
// in Harvester next to its network, given to the guest as network-config v2 on the MAC of its first interface,
// reported by `ip`; `rm` releases it.
func TestStaticAddressFromPool(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	createVMNetwork(t, b, ns, "static-net")
	cli := newCLI(t, b.AdminKubeconfig())
	cli.must(append(createArgs(t, ns, "--harvester-network-name", ns+"/static-net",
		"--harvester-ip-pool", "10.77.0.10-10.77.0.12/24", "--harvester-ip-pool-gateway", "10.77.0.1",
		"--harvester-ip-pool-dns", "10.77.0.2,10.77.0.3"), "m1")...)

	if out := cli.must("ip", "m1").Answer(); out != "10.77.0.10" {
		t.Errorf("ip: %q, want the pool's first address 10.77.0.10", out)
	}
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mac := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress
	secret, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, "m1-cloudinit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version   int `yaml:"version"`
		Ethernets map[string]struct {
			Match       struct{ MACAddress string }  `yaml:"match"`
			Addresses   []string                     `yaml:"addresses"`
			Routes      []struct{ To, Via string }   `yaml:"routes"`
			Nameservers struct{ Addresses []string } `yaml:"nameservers"`
		} `yaml:"ethernets"`
	}
	if err := yaml.Unmarshal(secret.Data["networkdata"], &doc); err != nil {
		t.Fatalf("network data: %v\n%s", err, secret.Data["networkdata"])
	}
	nic := doc.Ethernets["nic-0"]
	if doc.Version != 2 || mac == "" || nic.Match.MACAddress != mac || strings.Join(nic.Addresses, " ") != "10.77.0.10/24" ||
		len(nic.Routes) != 1 || nic.Routes[0] != (struct{ To, Via string }{"0.0.0.0/0", "10.77.0.1"}) ||
		strings.Join(nic.Nameservers.Addresses, " ") != "10.77.0.2 10.77.0.3" {
		t.Errorf("network data for the first NIC (MAC %q) is not the static address:\n%s", mac, secret.Data["networkdata"])
	}
	if src := vm.Spec.Template.Spec.Volumes[len(vm.Spec.Template.Spec.Volumes)-1].CloudInitNoCloud; src == nil || src.NetworkDataSecretRef == nil {
		t.Errorf("the cloud-init disk does not carry the network data")
	}
	cm, err := b.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "ip-static-net-10-77-0-10", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the allocation is not where the network is: %v", err)
	}
	if cm.Annotations["node-driver.harvesterhci.io/ip-vm-uid"] != string(vm.UID) || cm.Annotations["node-driver.harvesterhci.io/ip-vm"] != ns+"/m1" {
		t.Errorf("the allocation does not record its VM %s: %v", vm.UID, cm.Annotations)
	}

	cli.must("rm", "-y", "m1")
	if _, err := b.Kube.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{}); err == nil {
		t.Errorf("rm left the address allocated")
	}
	nothingLeft(t, b, ns)
}

// 50 creates at once from one range of 50 addresses, by separate drivers (as separate rancher-machine processes
// would be), with the network in another namespace than the VMs: 50 distinct addresses. The 51st machine fails
// the pre-flight and the create naming --harvester-ip-pool and the exhausted range. Removing the 50 frees all.
// The drivers are driven as a library: 51 rancher-machine processes would take minutes on two cores.
func TestIPPoolConcurrentCreates(t *testing.T) {
	const n = 50
	b := testbed.Shared(t)
	vmNS, netNS := b.Namespace(t), b.Namespace(t)
	createVMNetwork(t, b, netNS, "pool-net")
	quietDriverLog(t)
	m := createPoolMachines(t, b, vmNS, netNS, "pool-net", "pool", n, map[string]any{config.FlagIPPool: "10.88.0.1-10.88.0.50/24"})
	seen := map[string]int{}
	pool := netip.MustParsePrefix("10.88.0.0/24")
	for i, d := range m.drivers {
		ip, err := d.GetIP()
		if a, perr := netip.ParseAddr(ip); err != nil || perr != nil || !pool.Contains(a) || a.As4()[3] < 1 || a.As4()[3] > 50 {
			t.Errorf("machine %d: ip %q (%v), want one of the range", i, ip, err)
		}
		if other, dup := seen[ip]; dup {
			t.Errorf("machines %d and %d both got %s", other, i, ip)
		}
		seen[ip] = i
	}
	if cms := ipAllocations(t, b, netNS); len(cms) != n {
		t.Errorf("%d allocations for %d machines", len(cms), n)
	}

	m.refusedOneMore("--harvester-ip-pool: the range 10.88.0.1-10.88.0.50/24 on network " + netNS + "/pool-net is exhausted")
	m.removeAll()
}

// eachDriver runs fn for every driver at once and waits.
func eachDriver(drivers []*harvester.Driver, fn func(i int, d *harvester.Driver)) {
	var wg sync.WaitGroup
	for i, d := range drivers {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i, d) }()
	}
	wg.Wait()
}

// A create killed after it allocated its address and before it made its VM leaves the allocation behind. It
// holds the address for the create's lifetime (timeout + a minute), then the next allocation reclaims it; the
// killed machine's rm leaves the address to its new owner.
//
// It waits out that lifetime (about 70 s, nearly all asleep), so it runs beside the other parallel test, the real
// guests, instead of adding its wait to the package's time.
func TestKilledCreatesAddressIsReclaimed(t *testing.T) {
	t.Parallel()
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	createVMNetwork(t, b, ns, "reclaim-net")
	pool := []string{"--harvester-network-name", ns + "/reclaim-net", "--harvester-ip-pool", "10.66.0.10-10.66.0.10/24"}

	// The killed create: its cloud-init Secret is held at a proxy until rancher-machine and the plugin are killed.
	proxied, held := holdingProxy(t, b.AdminConfig(), func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/"+ns+"/secrets"
	})
	killed := newCLI(t, proxied)
	runCtx, kill := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		killed.Run(runCtx, nil, append(createArgs(t, ns, append(pool, "--harvester-create-timeout", "5")...), "m1")...)
	}()
	select {
	case <-held:
	case <-done:
		t.Fatal("the create ended before it sent its Secret")
	case <-time.After(2 * time.Minute):
		t.Fatal("the create never sent its Secret")
	}
	kill()
	<-done
	cm, err := b.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "ip-reclaim-net-10-66-0-10", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the killed create's allocation: %v", err)
	}
	if uid := cm.Annotations["node-driver.harvesterhci.io/ip-vm-uid"]; uid != "" {
		t.Fatalf("the killed create recorded a VM (%s)", uid)
	}

	cli := newCLI(t, b.AdminKubeconfig())
	r := cli.run(append(createArgs(t, ns, pool...), "m2")...)
	if r.Err == nil || !strings.Contains(r.Output, "--harvester-ip-pool: the range 10.66.0.10-10.66.0.10/24") ||
		!strings.Contains(r.Output, "is exhausted") || !strings.Contains(r.Output, "1 of them to creates still in flight") {
		t.Fatalf("a create while the killed one's lifetime runs: %s", r)
	}
	expiry := cm.CreationTimestamp.Add(5*time.Second + time.Minute)
	time.Sleep(time.Until(expiry) + 2*time.Second)
	cli.must(append(createArgs(t, ns, pool...), "m2")...)
	if out := cli.must("ip", "m2").Answer(); out != "10.66.0.10" {
		t.Errorf("ip: %q, want the reclaimed 10.66.0.10", out)
	}
	reclaimed, err := b.Kube.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
	if err != nil || reclaimed.UID == cm.UID || reclaimed.Annotations["node-driver.harvesterhci.io/ip-vm"] != ns+"/m2" {
		t.Fatalf("not reclaimed for m2: %v %v", err, reclaimed.Annotations)
	}

	killed.setCredential(b.AdminKubeconfig())
	killed.must("rm", "-y", "m1")
	if again, err := b.Kube.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil || again.UID != reclaimed.UID {
		t.Fatalf("removing the killed machine took m2's address: %v", err)
	}
	cli.must("rm", "-y", "m2")
	nothingLeft(t, b, ns)
}

// holdingProxy forwards requests to the API server with the admin credential and returns a kubeconfig for it.
// Requests for which hold is true are held until their client goes away; held is closed when the first arrives.
func holdingProxy(t *testing.T, admin *rest.Config, hold func(*http.Request) bool) (kubeconfig []byte, held <-chan struct{}) {
	t.Helper()
	return gatedProxy(t, admin, hold, nil)
}

// gatedProxy is holdingProxy whose held requests go on to the API server once gate is closed (never when nil).
func gatedProxy(t *testing.T, admin *rest.Config, hold func(*http.Request) bool, gate <-chan struct{}) (kubeconfig []byte, held <-chan struct{}) {
	t.Helper()
	p := startProxy(t, admin)
	return p.Kubeconfig(), p.Hold(hold, gate).Arrived()
}

// startProxy starts a proxy to the API server (package apiproxy) for the test.
func startProxy(t *testing.T, admin *rest.Config) *apiproxy.Proxy {
	t.Helper()
	p, err := apiproxy.Start(admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// createVMNetwork creates a VM network (a NetworkAttachmentDefinition) in namespace ns.
func createVMNetwork(t *testing.T, b *testbed.Bed, ns, name string) {
	t.Helper()
	nad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"config": `{"cniVersion":"0.3.1","name":"` + name + `","type":"bridge","bridge":"mgmt-br","promiscMode":true,"vlan":0,"ipam":{}}`},
	}}
	gvr := schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	if _, err := b.Dynamic.Resource(gvr).Namespace(ns).Create(context.Background(), nad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ipAllocations lists the node driver's address allocations in ns.
func ipAllocations(t *testing.T, b *testbed.Bed, ns string) []string {
	t.Helper()
	list, err := b.Kube.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: allocationSelector})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name+"="+cm.Annotations["node-driver.harvesterhci.io/ip-address"])
	}
	return names
}

// quietDriverLog keeps the milestones of drivers run in this process out of the test's output.
func quietDriverLog(t *testing.T) {
	log.SetOutWriter(io.Discard)
	log.SetErrWriter(io.Discard)
	t.Cleanup(func() {
		log.SetOutWriter(os.Stdout)
		log.SetErrWriter(os.Stderr)
	})
}
