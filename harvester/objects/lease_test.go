package objects

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

func leaseConfig(t *testing.T, kv ...any) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig("gc8-pool1-q99l7-6ndw9", configtest.With(configtest.MinimalOptions(),
		append([]any{config.FlagClusterName, "gc8", config.FlagIPPoolName, "vlan1"}, kv...)...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The lease's MAC address is a unicast, locally administered one of its own for each create: the managed DHCP
// gives a MAC it knows that MAC's address again, so no two creates may share one, however alike.
func TestLeaseMAC(t *testing.T) {
	net1, net2 := config.Ref{Namespace: "default", Name: "vlan1"}, config.Ref{Namespace: "default", Name: "vlan2"}
	vm1, vm2 := config.Ref{Namespace: "default", Name: "m1"}, config.Ref{Namespace: "team-a", Name: "m1"}
	seen := map[string]string{}
	for _, c := range []struct {
		what    string
		network config.Ref
		vm      config.Ref
		create  string
	}{{"the first", net1, vm1, "a"}, {"another create", net1, vm1, "b"}, {"another namespace", net1, vm2, "a"}, {"another network", net2, vm1, "a"}} {
		mac := LeaseMAC(c.network, c.vm, c.create)
		hw, err := net.ParseMAC(mac)
		if err != nil || hw[0]&1 != 0 || hw[0]&2 == 0 {
			t.Errorf("%s: %s is not a unicast, locally administered MAC address (%v)", c.what, mac, err)
		}
		if other, dup := seen[mac]; dup {
			t.Errorf("%s and %s share MAC address %s", c.what, other, mac)
		}
		seen[mac] = c.what
	}
	if LeaseMAC(net1, vm1, "a") != LeaseMAC(net1, vm1, "a") {
		t.Error("LeaseMAC is not a function of its arguments")
	}
}

// The guest asks for the lease by DHCP on the first NIC, matched by the MAC the VM gives it; the user's entries
// for other NICs stay, and the VM, pinned, names the leased address for the first NIC.
func TestLeaseNetworkDataAndPin(t *testing.T) {
	cfg := leaseConfig(t, config.FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vlan1"},{"networkName":"default/storage","macAddress":"52:54:00:00:00:02"}]}`,
		config.FlagNetworkData, "version: 2\nethernets:\n  storage:\n    match: {macaddress: '52:54:00:00:00:02'}\n    mtu: 9000\n")
	m, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = m.Complete(factsFor(cfg), Draw{ClaimSuffix: "abcde", CreateID: "0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	mac := LeaseMAC(config.Ref{Namespace: "default", Name: "vlan1"}, config.Ref{Namespace: "default", Name: cfg.MachineName}, "0123456789abcdef")
	if m.LeaseMAC() != mac {
		t.Fatalf("the machine's lease MAC %q, want the one its create's id derives, %q", m.LeaseMAC(), mac)
	}
	secret, vm, err := m.Objects(Learned{SSHKey: "ssh-ed25519 AAAA driver"})
	if err != nil {
		t.Fatal(err)
	}
	configtest.WantAll(t, string(secret.Data["networkdata"]), "storage:", "mtu: 9000", "nic-0:", `macaddress: "`+mac+`"`, "dhcp4: true")
	if got := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress; got != mac {
		t.Errorf("first NIC's MAC %q, want the lease's %q", got, mac)
	}
	if vm.Annotations[config.AnnotationIPLeasePool] != "default/vlan1" || vm.Annotations[config.AnnotationStaticIP] != "" {
		t.Errorf("annotations of the VM as created: %v", vm.Annotations)
	}
	pinned := PinLease(vm, netip.MustParseAddr("10.0.0.57"))
	if pinned.Annotations["static-ip.harvesterhci.io/nic-0"] != "10.0.0.57" || vm.Annotations[config.AnnotationStaticIP] != "" {
		t.Errorf("pinned %v; the VM pinned from %v", pinned.Annotations, vm.Annotations)
	}
	out, err := toYAML(pinned)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "vm/ip-pool-name-pinned.yaml", out)
}

// The MAC address and the pinned lease are the driver's when it leases: a VM patch may change neither. Without a
// lease the annotation is the user's to set (on another network's pool, say).
func TestVMPatchLeavesTheLeaseAlone(t *testing.T) {
	for _, patch := range []string{
		`{"metadata":{"annotations":{"static-ip.harvesterhci.io/nic-0":"10.0.0.99"}}}`,
		`[{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"52:54:00:00:00:09"}]`,
	} {
		_, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagIPPoolName, "vlan1", config.FlagVMPatch, patch))
		if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch") {
			t.Errorf("patch %s with a lease: %v, want it refused", patch, err)
		}
	}
	if _, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(),
		config.FlagVMPatch, `{"metadata":{"annotations":{"static-ip.harvesterhci.io/nic-0":"10.0.0.99"}}}`)); err != nil {
		t.Errorf("the annotation without a lease: %v", err)
	}
}
