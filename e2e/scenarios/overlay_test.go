package scenarios

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// Harvester 1.9's overlay networks through the real rancher-machine (harvester/harvester#9682): a machine on the
// seeded Kube-OVN network default/ovn-vms is checked, created — stored with Harvester's managedtap binding, its
// address one of the Subnet's, reported by the guest agent as on a bridge network, so `ip` gives it — and removed,
// leaving nothing. A static address on it is refused by check and by the create's pre-flight (--harvester-ip-pool,
// network data by name), and so are a network without a Subnet and one whose Subnet has no address free, with
// nothing made.
func TestOverlayNetwork(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	onOverlay := func(network string, extra ...string) []string {
		return append([]string{"--harvester-network-name", "default/" + network}, extra...)
	}
	kubeconfig := b.AdminKubeconfig()
	cli := newCLI(t, kubeconfig) // and the plugin the check runs

	out, code := runCheck(t, kubeconfig, append(checkArgs(ns), onOverlay(fixtures.OverlayVMs)...)...)
	wantOK := "ok       networks              of VM " + ns + "/checked: nic-0 on overlay network default/" + fixtures.OverlayVMs + ": Kube-OVN subnet " +
		fixtures.OverlayVMs + "-subnet 172.20.10.0/24, "
	if code != 0 || !strings.Contains(out, wantOK) {
		t.Errorf("check on the overlay network: exit %d, want 0 and the line %q", code, wantOK)
	}

	quiet(t, cli.must(append(createArgs(t, ns, onOverlay(fixtures.OverlayVMs)...), "m1")...))
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nic := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0]; nic.Binding == nil || nic.Binding.Name != "managedtap" || nic.Bridge != nil {
		t.Errorf("nic-0 stored as %+v, want Harvester's managedtap binding in place of the driver's bridge", nic.InterfaceBindingMethod)
	}
	subnet, err := b.Dynamic.Resource(schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}).
		Get(ctx, fixtures.OverlayVMs+"-subnet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := standin.OverlayAddress(subnet, ns, "m1", 0)
	if got := cli.must("ip", "m1").Answer(); got != want || !netip.MustParsePrefix("172.20.10.0/24").Contains(netip.MustParseAddr(got)) {
		t.Errorf("ip: %q, want the Subnet's address %s", got, want)
	}
	quiet(t, cli.must("rm", "-y", "m1"))
	nothingLeft(t, b, ns)

	why := "nic-0 is on Kube-OVN overlay network default/" + fixtures.OverlayVMs + ", where Kube-OVN gives the VM its address"
	for _, c := range []struct {
		name      string
		args      []string
		line      string // the check's problem line, without the check's name
		checkName string
	}{
		{"IP pool", onOverlay(fixtures.OverlayVMs, "--harvester-ip-pool", "172.20.10.50-172.20.10.59/24", "--harvester-ip-pool-gateway", "172.20.10.1"),
			"--harvester-ip-pool: " + why, "networks"},
		{"network data", onOverlay(fixtures.OverlayVMs, "--harvester-network-data", "version: 2\nethernets:\n  eth0:\n    addresses: [172.20.10.50/24]\n"),
			"--harvester-network-data: ethernets.eth0 gives static addresses to a NIC that may be nic-0, which is on Kube-OVN overlay network default/" + fixtures.OverlayVMs, "networks"},
		{"no subnet", onOverlay(fixtures.OverlayNoSubnet),
			"--harvester-network-name: nic-0: no Kube-OVN subnet serves overlay network default/" + fixtures.OverlayNoSubnet, "networks"},
		{"exhausted", onOverlay(fixtures.OverlayFull),
			"--harvester-network-name: nic-0: Kube-OVN subnet " + fixtures.OverlayFull + "-subnet (172.20.30.0/30) of overlay network default/" + fixtures.OverlayFull +
				" has no free IPv4 address (1 in use), so the VM would get none", "networks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			line := "problem  " + c.checkName + strings.Repeat(" ", 22-len(c.checkName)) + c.line
			if out, code := runCheck(t, kubeconfig, append(checkArgs(ns), c.args...)...); code != 1 || !strings.Contains(out, line) {
				t.Errorf("check: exit %d, want 1 and the line %q", code, line)
			}
			r := cli.run(append(createArgs(t, ns, c.args...), "m2")...)
			if r.Err == nil || !strings.Contains(r.Output, "cannot create the machine on Harvester") || !strings.Contains(r.Output, c.line) {
				t.Errorf("create: %v, want the pre-flight's %q\n%s", r.Err, c.line, r.Output)
			}
			if strings.Contains(r.Output, "Creating VM") {
				t.Errorf("the create went past the pre-flight")
			}
			nothingLeft(t, b, ns)
		})
	}
}
