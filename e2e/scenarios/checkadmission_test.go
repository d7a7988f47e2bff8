package scenarios

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The check verb asks the simulated Harvester's admission — Harvester's own validator and mutator and KubeVirt's
// admitter — about the exact Secret and VM a create would send, as dry runs, and writes nothing: the namespace's
// VMs, VMIs, Secrets, PVCs and Events, with their resourceVersions, are the same after as before, and every request
// is a read, a review or a dry run. A VM the driver's own checks pass is refused there: its fixed MAC address is
// already another VM's on the same cluster network, which only Harvester's validator knows. A VM name that is
// taken is refused for it.
func TestCheckVerbAsksAdmission(t *testing.T) {
	b := testbed.Shared(t)
	ns, elsewhere := b.Namespace(t), b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	ctx := context.Background()

	// Another namespace's VM holds the MAC address, on cluster network mgmt as the machine's network is. It has
	// the machine's name: a check in its namespace finds the name taken.
	const mac = "02:00:5e:37:00:02"
	holder := macHolder(elsewhere, "checked", mac)
	if _, err := b.Virt.KubevirtV1().VirtualMachines(elsewhere).Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitMACKnown(t, b, elsewhere, mac)

	kubeconfig, recorded := recordingProxy(t, b)
	before := namespaceObjects(t, b, ns)

	const assumed = "(assumed: a new SSH key, as a create makes one)"
	out, code := runCheck(t, kubeconfig, checkArgs(ns)...)
	if want := "ok       admission             Secret " + ns + "/checked-cloudinit and VM " + ns + "/checked accepted in a dry run, nothing written " + assumed + "\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("a machine without a fixed MAC address: exit %d, want 0 and the line %q", code, want)
	}

	networkInfo := fmt.Sprintf(`{"interfaces":[{"networkName":"default/vm-untag","macAddress":%q}]}`, mac)
	args := []string{"--harvester-vm-namespace", ns, "--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "10",
		"--harvester-network-info", networkInfo, "--harvester-cpu-count", "2", "--harvester-memory-size", "4"}
	out, code = runCheck(t, kubeconfig, args...)
	refused := "problem  admission             VM " + ns + "/checked: admission webhook " + admission.HarvesterWebhookName +
		" refuses it: duplicate mac address present for vm checked for cluster network mgmt (dry run; " + strings.Trim(assumed, "()") + ")"
	if code != 1 || !strings.Contains(out, refused+"\n") {
		t.Errorf("a machine whose MAC address another VM has: exit %d, want 1 and the line %q", code, refused)
	}
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "problem") && !strings.HasPrefix(line, refused) {
			t.Errorf("the driver's own checks find a problem, so the bed proves nothing: %s", line)
		}
	}

	// The name a create would use is taken: the API server refuses the dry run as it would the create, once
	// admission let it through.
	out, code = runCheck(t, kubeconfig, checkArgs(elsewhere)...)
	taken := "problem  admission             VM " + elsewhere + "/checked already exists: the cluster's admission lets the create through, " +
		"and the API server refuses it for its name; choose another machine name or remove that VM\n"
	if code != 1 || !strings.Contains(out, taken) {
		t.Errorf("a machine whose VM name is taken: exit %d, want 1 and the line %q", code, taken)
	}

	after := namespaceObjects(t, b, ns)
	if !maps.Equal(before, after) {
		t.Errorf("check changed namespace %s:\nbefore %v\nafter  %v", ns, before, after)
	}
	_, dryRuns := onlyReadsAndDryRuns(t, recorded())
	secrets, vms := "/api/v1/namespaces/"+ns+"/secrets", "/apis/kubevirt.io/v1/namespaces/"+ns+"/virtualmachines"
	secrets2, vms2 := "/api/v1/namespaces/"+elsewhere+"/secrets", "/apis/kubevirt.io/v1/namespaces/"+elsewhere+"/virtualmachines"
	if want := []string{secrets, vms, secrets, vms, secrets2, vms2}; !slices.Equal(dryRuns, want) {
		t.Errorf("dry runs %v, want each check's Secret, then its VM: %v", dryRuns, want)
	}
}

// macHolder is a halted VM with one bridge interface of MAC address mac on network default/vm-untag: what
// Harvester's validator indexes VMs by (harvester/harvester pkg/webhook/indexeres VMByMacAddress).
func macHolder(ns, name, mac string) *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &halted,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{
					CPU:       &kubevirtv1.CPU{Cores: 1, Sockets: 1, Threads: 1}, // Harvester's mutator sets its maxSockets
					Resources: kubevirtv1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
					Devices: kubevirtv1.Devices{Interfaces: []kubevirtv1.Interface{{Name: "nic-0", MacAddress: mac,
						InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}}},
				},
				Networks: []kubevirtv1.Network{{Name: "nic-0", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "default/vm-untag"}}}},
			}},
		},
	}
}

// awaitMACKnown waits until Harvester's validator, whose VMs come from an informer, knows the VM that holds mac:
// until it refuses another VM of that address in a dry run.
func awaitMACKnown(t *testing.T, b *testbed.Bed, ns, mac string) {
	t.Helper()
	probe := macHolder(ns, "mac-probe", mac)
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = b.Virt.KubevirtV1().VirtualMachines(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), "duplicate mac address"), nil
	})
	if err != nil {
		t.Fatalf("Harvester's validator does not know the VM holding %s: %v; the last dry run answered %v", mac, err, last)
	}
}

// namespaceObjects lists the namespace's VMs, VMIs, Secrets, PVCs and Events: each one's UID and resourceVersion
// by kind and name.
func namespaceObjects(t *testing.T, b *testbed.Bed, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	add := func(kind string, items []metav1.Object, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("list %s in %s: %v", kind, ns, err)
		}
		for _, m := range items {
			out[kind+" "+m.GetName()] = string(m.GetUID()) + "@" + m.GetResourceVersion()
		}
	}
	vms, err := b.Virt.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
	add("VirtualMachine", metas(vms.Items), err)
	vmis, err := b.Virt.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	add("VirtualMachineInstance", metas(vmis.Items), err)
	secrets, err := b.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	add("Secret", metas(secrets.Items), err)
	pvcs, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	add("PersistentVolumeClaim", metas(pvcs.Items), err)
	events, err := b.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	add("Event", metas(events.Items), err)
	return out
}

// metas views a list's items as their object metadata.
func metas[T any, P interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}
