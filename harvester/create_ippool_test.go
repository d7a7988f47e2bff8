package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
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
// first NIC's MAC; false when the guest has no Secret. A VM deleted since the event that brought it here may have
// taken its Secret along (the garbage collector); only a VM that still exists without one is an error.
func (fc *fakeCluster) staticAddresses(vm *kubevirtv1.VirtualMachine) ([]string, bool) {
	ctx := context.Background()
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, vm.Namespace, objects.CloudInitSecretName(vm.Name))
	if err != nil {
		if _, vmErr := fc.KV.KubevirtV1().VirtualMachines(vm.Namespace).Get(ctx, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(vmErr) {
			fc.T.Errorf("the guest has no cloud-init Secret: %v", err)
		}
		return nil, false
	}
	var doc struct {
		Ethernets map[string]struct {
			Match     struct{ MACAddress string } `yaml:"match"`
			Addresses []string                    `yaml:"addresses"`
		} `yaml:"ethernets"`
	}
	if err := yaml.Unmarshal(secret.Data[objects.SecretKeyNetworkData], &doc); err != nil {
		fc.T.Errorf("network data: %v", err)
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
func (fc *fakeCluster) allocations() map[string]corev1.ConfigMap { return fc.ConfigMaps("default") }

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
	out.clients = fc.C
	return out
}

// A machine with a pool: the first address is allocated in Harvester, recorded with its VM, given to the guest
// as network-config v2 on a MAC the VM's first interface gets, reported by GetIP, and released by Remove.
func TestCreateWithIPPool(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(fc.staticGuest())
	kubefake.CaptureLog(t)
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

	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
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
	// What the allocation holds is harvester/ippool's test; the create records its VM there.
	if cm, ok := fc.allocations()["ip-vlan1-10-0-0-10"]; !ok || cm.Annotations[config.AnnotationIPVMUID] != string(vm.UID) {
		t.Fatalf("the allocation does not record the VM: %v", fc.allocations())
	}
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
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
	kubefake.CaptureLog(t)
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

// A failed create releases its address with everything else; so does one that cannot record its VM.
func TestIPPoolReleasedOnRollback(t *testing.T) {
	for _, w := range []struct{ verb, resource string }{{"create", "virtualmachines"}, {"patch", "configmaps"}, {"create", "secrets"}} {
		t.Run(w.verb+" "+w.resource, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(fc.staticGuest())
			kubefake.CaptureLog(t)
			d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
			fc.FailOn(w.verb, w.resource, apierrors.NewInternalError(errors.New("injected failure")))
			if err := d.Create(); err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Create: %v", err)
			}
			fc.nothingLeft(t)
			if got := fc.allocations(); len(got) != 0 {
				t.Errorf("the address is still allocated: %v", allocationNames(got))
			}
		})
	}
	// The answer to the allocation's create is lost: the create goes on with the allocation it finds by its id,
	// and its rollback releases it.
	t.Run("lost answer", func(t *testing.T) {
		fc := newFakeCluster(t)
		fc.kubeVirt(fc.staticGuest())
		kubefake.CaptureLog(t)
		d := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24"))
		lost := fc.LoseAnswer("configmaps")
		fc.FailOn("create", "virtualmachines", apierrors.NewBadRequest("injected failure"))
		if err := d.Create(); err == nil || !strings.Contains(err.Error(), "injected failure") || strings.Contains(err.Error(), "cleanup") {
			t.Fatalf("Create: %v", err)
		}
		if lost.Load() != 1 {
			t.Fatalf("the answer was lost %d times", lost.Load())
		}
		fc.nothingLeft(t)
		if got := fc.allocations(); len(got) != 0 {
			t.Errorf("the address is still allocated: %v", allocationNames(got))
		}
	})
}
