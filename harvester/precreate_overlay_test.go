package harvester

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// addOverlay makes overlay network default/name as Harvester's UI writes one (harvester-ui-extension
// harvesterhci.io.networkattachmentdefinition.vue updateBeforeSave), and, when subnet is not nil, its Kube-OVN
// Subnet: 172.20.10.0/24, DHCP on, ready, 253 addresses free, changed by subnet.
func (fc *fakeCluster) addOverlay(name string, subnet func(*kube.Subnet)) {
	fc.addNetwork("default", name, `{"cniVersion":"0.3.1","name":"`+name+`","type":"kube-ovn","provider":"`+name+
		`.default.ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock"}`)
	if subnet == nil {
		return
	}
	s := &kube.Subnet{ObjectMeta: metav1.ObjectMeta{Name: name + "-subnet"}}
	s.Spec = kube.SubnetSpec{Protocol: "IPv4", CIDRBlock: "172.20.10.0/24", Gateway: "172.20.10.1", ExcludeIps: []string{"172.20.10.1"},
		Provider: name + ".default.ovn", EnableDHCP: true}
	s.Status = kube.SubnetStatus{V4AvailableIPs: 253, Conditions: []kube.SubnetCondition{
		{Type: "Validated", Status: "True", Reason: "ValidateLogicalSwitchSuccess"}, {Type: "Ready", Status: "True", Reason: "ResetLogicalSwitchAclSuccess"}}}
	subnet(s)
	fc.OK(kube.Create(context.Background(), fc.C, kube.Subnets, "", s))
}

// overlayOptions are a create's flags with the first NIC on network default/ovn1.
func overlayOptions(kv ...any) config.Options {
	return configtest.With(createOptions(), append([]any{config.FlagNetworkName, "default/ovn1"}, kv...)...)
}

// subnetLists counts the lists of Kube-OVN subnets made.
func (fc *fakeCluster) subnetLists() int {
	n := 0
	for _, a := range fc.Dyn.Actions() {
		if a.GetResource().Resource == "subnets" && a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// A NIC on an overlay network whose Subnet is ready, has DHCP on and free addresses passes, and the check line
// names the Subnet and its free addresses, read with one list; a bridge network lists no Subnets.
func TestPreCreateCheckOverlayNetwork(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addOverlay("ovn1", func(*kube.Subnet) {})
	fc.Dyn.ClearActions()
	c := checkNamed(t, newTestDriver(t, fc, "m1", overlayOptions()), preflight.CheckNetworks)
	want := "nic-0 on overlay network default/ovn1: Kube-OVN subnet ovn1-subnet 172.20.10.0/24, 253 free addresses"
	if len(c.Problems) != 0 || c.Skipped != "" || c.Detail != want {
		t.Errorf("check %+v, want ok with %q", c, want)
	}
	if n := fc.subnetLists(); n != 1 {
		t.Errorf("%d lists of subnets, want 1", n)
	}
	fc.Dyn.ClearActions()
	if c := checkNamed(t, newTestDriver(t, fc, "m1", createOptions()), preflight.CheckNetworks); len(c.Problems) != 0 || c.Detail != "" || fc.subnetLists() != 0 {
		t.Errorf("on a bridge network: check %+v and %d lists of subnets, want ok, no detail, none", c, fc.subnetLists())
	}
}

// What keeps Kube-OVN from giving the VM an address is refused before anything is made, under the NIC's flag,
// saying what to change: no Subnet, one not ready or not yet handled, DHCP off, no free address, fewer than the
// machines of the pool; and a Harvester that serves no Subnets.
func TestPreCreateCheckOverlaySubnetProblems(t *testing.T) {
	const subnet = "Kube-OVN subnet ovn1-subnet (172.20.10.0/24) of overlay network default/ovn1"
	for _, c := range []struct {
		name     string
		subnet   func(*kube.Subnet)
		machines int
		notFound bool
		want     string
	}{
		{name: "no subnet", want: "nic-0: no Kube-OVN subnet serves overlay network default/ovn1 (none has provider ovn1.default.ovn), so Kube-OVN has no address for the VM; " +
			"create one in Harvester (Networks → Virtual Private Cloud → Create Subnet, provider default/ovn1)"},
		{name: "another network's", subnet: func(s *kube.Subnet) { s.Spec.Provider = "ovn2.default.ovn" }, want: "none has provider ovn1.default.ovn"},
		{name: "not validated", subnet: func(s *kube.Subnet) {
			s.Status.Conditions[0] = kube.SubnetCondition{Type: "Validated", Status: "False", Reason: "ValidateLogicalSwitchFailed", Message: "gateway 10.0.0.1 is not in cidr"}
			s.Status.Conditions[1].Status = "False"
		}, want: "nic-0: " + subnet + " is not ready (Validated False: ValidateLogicalSwitchFailed gateway 10.0.0.1 is not in cidr); see its conditions in Harvester (Networks → Virtual Private Cloud)"},
		{name: "not handled", subnet: func(s *kube.Subnet) { s.Status = kube.SubnetStatus{} },
			want: subnet + " is not ready (Kube-OVN has not reported on it: no conditions)"},
		{name: "DHCP off", subnet: func(s *kube.Subnet) { s.Spec.EnableDHCP = false },
			want: "nic-0: " + subnet + " has DHCP off, so the guest would get no address (Kube-OVN hands its addresses out by DHCP, and routes no other); " +
				"turn it on in Harvester (the subnet's Edit as YAML: spec.enableDHCP: true)"},
		{name: "exhausted", subnet: func(s *kube.Subnet) { s.Status.V4AvailableIPs, s.Status.V4UsingIPs = 0, 253 },
			want: "nic-0: " + subnet + " has no free IPv4 address (253 in use), so the VM would get none; free addresses or widen the subnet in Harvester"},
		{name: "dual-stack, IPv6 exhausted", subnet: func(s *kube.Subnet) { s.Spec.Protocol, s.Status.V6AvailableIPs = "Dual", 0 },
			want: subnet + " has no free IPv6 address"},
		{name: "fewer than the pool", subnet: func(s *kube.Subnet) { s.Status.V4AvailableIPs = 2 }, machines: 3,
			want: "nic-0: " + subnet + " has 2 free IPv4 addresses, fewer than the 3 the machines need; free addresses or widen the subnet in Harvester"},
		{name: "not served", subnet: func(*kube.Subnet) {}, notFound: true,
			want: "nic-0: network default/ovn1 is a Kube-OVN overlay network, but Harvester serves no Kube-OVN subnets (kubeovn.io/v1): enable the kubeovn-operator add-on (Advanced → Add-ons) and give the network a subnet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			fc.addOverlay("ovn1", c.subnet)
			driver := func() *Driver {
				if c.notFound { // the answer to each list of a resource the API server does not serve
					fc.FailOn("list", "subnets", apierrors.NewNotFound(schema.GroupResource{Group: "kubeovn.io", Resource: "subnets"}, ""))
				}
				d := newTestDriver(t, fc, "m1", overlayOptions())
				d.machines = max(1, c.machines)
				return d
			}
			check := checkNamed(t, driver(), preflight.CheckNetworks)
			if len(check.Problems) != 1 || check.Problems[0].Flag != config.FlagNetworkName || !strings.Contains(check.Problems[0].Message, c.want) {
				t.Errorf("check %+v\nwant one problem of --%s with %q", check, config.FlagNetworkName, c.want)
			}
			if err := driver().PreCreateCheck(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("PreCreateCheck: %v", err)
			}
			fc.nothingLeft(t)
		})
	}
}

// A credential that may not list Subnets is not refused: that part of the check is skipped, saying why.
func TestPreCreateCheckOverlaySubnetsForbidden(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addOverlay("ovn1", nil)
	fc.FailOn("list", "subnets", apierrors.NewForbidden(schema.GroupResource{Group: "kubeovn.io", Resource: "subnets"}, "", errors.New("no")))
	c := checkNamed(t, newTestDriver(t, fc, "m1", overlayOptions()), preflight.CheckNetworks)
	want := "the credential may not list subnets.kubeovn.io: cannot tell whether network default/ovn1 has a Kube-OVN subnet with a free address"
	if len(c.Problems) != 0 || c.Skipped != want {
		t.Errorf("check %+v\nwant skipped: %q", c, want)
	}
}

// A static address for a NIC on an overlay network is refused, with the reason: from --harvester-ip-pool, a lease
// of Harvester's managed DHCP (--harvester-ip-pool-name), from
// inline network data or network data kept in a Secret that gives it one (by its MAC address, or by name, which
// may be any NIC's); DHCP, and a static address matched by MAC address to a NIC on a VLAN network, are not.
func TestPreCreateCheckOverlayRefusesStaticAddresses(t *testing.T) {
	const overlayWhy = "which is on Kube-OVN overlay network default/ovn1, where Kube-OVN gives the address (by DHCP) and routes no other; " +
		"let nic-0 take DHCP, and match entries with static addresses by macaddress to NICs on VLAN networks (their macAddress in --harvester-network-info)"
	twoNICs := `{"interfaces":[{"networkName":"default/ovn1","macAddress":"52:54:00:00:00:01"},{"networkName":"default/vlan1","macAddress":"52:54:00:00:00:02"}]}`
	byMAC := func(mac string) string {
		return "version: 2\nethernets:\n  lan:\n    match: {macaddress: '" + mac + "'}\n    addresses: [10.0.0.5/24]\n"
	}
	for _, c := range []struct {
		name, check, flag, want string
		opts                    config.Options
		secret                  string
	}{
		{name: "IP pool", check: preflight.CheckNetworks, flag: config.FlagIPPool,
			opts: overlayOptions(config.FlagIPPool, "10.0.0.10-10.0.0.20/24", config.FlagIPPoolGateway, "10.0.0.1"),
			want: "nic-0 is on Kube-OVN overlay network default/ovn1, where Kube-OVN gives the VM its address (its own IPAM, by DHCP) and routes that one alone: " +
				"a static address would not be reachable; leave --harvester-ip-pool out, or put nic-0 on a VLAN network"},
		{name: "IP pool of Harvester's managed DHCP", check: preflight.CheckNetworks, flag: config.FlagIPPoolName,
			opts: overlayOptions(config.FlagIPPoolName, "default/pool1"),
			want: "nic-0 is on Kube-OVN overlay network default/ovn1, where Kube-OVN gives the VM its address (its own IPAM, by DHCP) and routes that one alone: " +
				"Harvester's managed DHCP would lease one no one routes; leave --harvester-ip-pool-name out, or put nic-0 on a VLAN network"},
		{name: "inline, by name", check: preflight.CheckNetworks, flag: config.FlagNetworkData,
			opts: overlayOptions(config.FlagNetworkData, "version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.5/24]\n"),
			want: "ethernets.eth0 gives static addresses to a NIC that may be nic-0, " + overlayWhy},
		{name: "inline, by the NIC's MAC", check: preflight.CheckNetworks, flag: config.FlagNetworkData,
			opts: overlayOptions(config.FlagNetworkInfo, twoNICs, config.FlagNetworkData, byMAC("52:54:00:00:00:01")),
			want: "ethernets.lan gives static addresses to a NIC that may be nic-0, " + overlayWhy},
		{name: "inline, by the VLAN NIC's MAC", check: preflight.CheckNetworks,
			opts: overlayOptions(config.FlagNetworkInfo, twoNICs, config.FlagNetworkData, byMAC("52:54:00:00:00:02"))},
		{name: "inline, DHCP", check: preflight.CheckNetworks, opts: overlayOptions(config.FlagNetworkData, "version: 2\nethernets:\n  eth0: {dhcp4: true}\n")},
		{name: "in a Secret", check: preflight.CheckDataSecrets, flag: config.FlagNetworkDataSecret,
			opts:   overlayOptions(config.FlagNetworkDataSecret, "nd"),
			secret: "version: 1\nconfig:\n- type: physical\n  name: eth0\n  subnets: [{type: static, address: 10.0.0.5/24}]\n",
			want:   "config[0] gives static addresses to a NIC that may be nic-0, " + overlayWhy},
		{name: "in a Secret, DHCP", check: preflight.CheckDataSecrets, opts: overlayOptions(config.FlagNetworkDataSecret, "nd"),
			secret: "version: 2\nethernets:\n  eth0: {dhcp4: true}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			fc.addOverlay("ovn1", func(*kube.Subnet) {})
			if c.secret != "" {
				fc.userSecret("nd", map[string]string{"networkdata": c.secret}, nil)
			}
			check := checkNamed(t, newTestDriver(t, fc, "m1", c.opts), c.check)
			switch {
			case c.want == "" && len(check.Problems) != 0:
				t.Errorf("check %+v, want no problem", check)
			case c.want != "" && (len(check.Problems) != 1 || check.Problems[0].Flag != c.flag || check.Problems[0].Message != c.want):
				t.Errorf("check %+v\nwant one problem of --%s: %q", check, c.flag, c.want)
			}
		})
	}
}

// The check judges the VM as built: a --harvester-vm-patch that puts nic-0 on an overlay network has its Subnet
// checked, under the patch's flag, and a static address from --harvester-ip-pool refused there; one that takes
// nic-0 off the overlay network the flags name leaves no overlay NIC to check.
func TestPreCreateCheckOverlayJudgesThePatchedVM(t *testing.T) {
	toNetwork := func(network string) string {
		return `[{"op":"replace","path":"/spec/template/spec/networks/0/multus/networkName","value":"` + network + `"}]`
	}
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addOverlay("ovn1", func(s *kube.Subnet) { s.Spec.EnableDHCP = false })

	c := checkNamed(t, newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagVMPatch, toNetwork("default/ovn1"))), preflight.CheckNetworks)
	want := "--harvester-vm-patch: nic-0: Kube-OVN subnet ovn1-subnet (172.20.10.0/24) of overlay network default/ovn1 has DHCP off"
	if len(c.Problems) != 1 || !strings.HasPrefix(c.Problems[0].String(), want) {
		t.Errorf("nic-0 patched onto the overlay network: check %+v\nwant one problem starting %q", c, want)
	}

	pool := []any{config.FlagIPPool, "10.0.0.10-10.0.0.20/24", config.FlagIPPoolGateway, "10.0.0.1"}
	c = checkNamed(t, newTestDriver(t, fc, "m1", configtest.With(createOptions(), append(pool, config.FlagVMPatch, toNetwork("default/ovn1"))...)), preflight.CheckNetworks)
	if !slices.ContainsFunc(c.Problems, func(p config.Problem) bool {
		return p.Flag == config.FlagIPPool && strings.HasPrefix(p.Message, "nic-0 is on Kube-OVN overlay network default/ovn1")
	}) {
		t.Errorf("the IP pool with nic-0 patched onto the overlay network: check %+v, want --%s refused", c, config.FlagIPPool)
	}

	d := newTestDriver(t, fc, "m1", overlayOptions(config.FlagVMPatch, toNetwork("default/vlan1")))
	fc.Dyn.ClearActions()
	c = checkNamed(t, d, preflight.CheckNetworks)
	if len(c.Problems) != 0 || c.Skipped != "" || fc.subnetLists() != 0 {
		t.Errorf("nic-0 patched off the overlay network: check %+v and %d lists of subnets, want ok and none", c, fc.subnetLists())
	}
}
