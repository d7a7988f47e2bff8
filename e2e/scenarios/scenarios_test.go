package scenarios

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// installScript is a stand-in for Rancher's system-agent installer, passed as --custom-install-script.
const installScript = "#!/bin/sh\necho registered > /var/lib/e2e-install-marker\n"

// The Rancher flow: credential in the environment, Rancher's install script through --custom-install-script,
// the user's base64 user data; then every command a docker-machine user has, asserted on the API objects.
func TestRancherFlowAndMachineCommands(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	ctx := context.Background()
	name := "gc1-pool1-abcde-fghij"
	userData := base64.StdEncoding.EncodeToString([]byte("#cloud-config\ntimezone: Europe/Berlin\nhostname: pool-wide-name\n"))

	quiet(t, cli.must(append(createArgs(t, ns, "--harvester-user-data", userData, "--harvester-cluster-name", "gc1"), name)...))

	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"harvesterhci.io/creator": "docker-machine-driver-harvester", "harvesterhci.io/vmName": name,
		"guestcluster.harvesterhci.io/name": "gc1", "nodepool.harvesterhci.io/name": "pool1-abcde"} {
		if vm.Labels[k] != want || vm.Spec.Template.ObjectMeta.Labels[k] != want {
			t.Errorf("label %s: VM %q, template %q, want %q", k, vm.Labels[k], vm.Spec.Template.ObjectMeta.Labels[k], want)
		}
	}
	secret, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-cloudinit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != vm.UID {
		t.Errorf("the Secret is not owned by its VM: %+v", secret.OwnerReferences)
	}
	publicKey, err := os.ReadFile(filepath.Join(cli.Store, "machines", name, "id_rsa.pub"))
	if err != nil {
		t.Fatalf("the machine's key is not in the store: %v", err)
	}
	checkRancherUserData(t, string(secret.Data["userdata"]), name, strings.TrimSpace(string(publicKey)))
	noSavedCredential := func(after string) {
		t.Helper()
		if held := storeFilesHolding(t, cli.Store, name, b.AdminConfig().BearerToken, base64.StdEncoding.EncodeToString(b.AdminKubeconfig())); len(held) > 0 {
			t.Errorf("after %s the credential from the environment is saved in %v: Rancher copies the store into a Secret", after, held)
		}
	}
	noSavedCredential("create")

	ipv4, _ := standin.Addresses(ns, name, 0)
	// Plain `ls` panics in rancher-machine itself for machines created with --custom-install-script (create sets
	// HostOptions.SwarmOptions to nil, ls.go dereferences it); `ls -q` with a state filter avoids that code and
	// still asks the driver for each machine's state.
	if out := cli.must("ls", "-q", "--filter", "state=Running").Answer(); out != name {
		t.Errorf("ls of running machines: %q", out)
	}
	if out := quiet(t, cli.must("status", name)).Answer(); out != "Running" {
		t.Errorf("status: %q", out)
	}
	if out := cli.must("ip", name).Answer(); out != ipv4 {
		t.Errorf("ip: %q, want %s", out, ipv4)
	}

	cli.must("stop", name)
	vmiGone(t, b, ns, name)
	if out := cli.must("status", name).Answer(); out != "Stopped" {
		t.Errorf("status after stop: %q", out)
	}
	if out := cli.must("ls", "-q", "--filter", "state=Stopped").Answer(); out != name {
		t.Errorf("ls of stopped machines: %q", out)
	}

	second := startAndRestart(t, b, cli, ns, name)

	zeroGrace := watchForZeroGrace(t, b, second)
	cli.must("kill", name)
	if err := <-zeroGrace; err != nil {
		t.Errorf("kill did not ask for an immediate power-off: %v", err)
	}
	vmiGone(t, b, ns, name)
	noSavedCredential("the machine commands")

	quiet(t, cli.must("rm", "-y", name))
	nothingLeft(t, b, ns)
	if _, err := os.Stat(filepath.Join(cli.Store, "machines", name)); !os.IsNotExist(err) {
		t.Errorf("rm left the machine in the store: %v", err)
	}
}

// startAndRestart runs start and then restart on stopped machine name and returns the VMI restart made, a new one.
// Both end with rancher-machine's Docker check over SSH (see runUntil): they are stopped once the driver reports the
// machine running again.
func startAndRestart(t *testing.T, b *testbed.Bed, cli *machineCLI, ns, name string) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	running := "VM " + ns + "/" + name + " is running at"
	if r := cli.runUntil(running, "start", name); !strings.Contains(r.Output, running) {
		t.Fatalf("start: %s", r)
	}
	first := vmiRunning(t, b, ns, name)
	if r := cli.runUntil(running, "restart", name); !strings.Contains(r.Output, running) {
		t.Fatalf("restart: %s", r)
	}
	second := vmiRunning(t, b, ns, name)
	if second.UID == first.UID {
		t.Fatalf("restart left the same VMI (%s)", first.UID)
	}
	return second
}

// checkRancherUserData asserts what a node boots with in the Rancher flow.
func checkRancherUserData(t *testing.T, userData, name, publicKey string) {
	t.Helper()
	if !strings.HasPrefix(userData, "#cloud-config\n") {
		t.Fatalf("user data is not a cloud-config:\n%s", userData)
	}
	var doc struct {
		Hostname          string   `yaml:"hostname"`
		Timezone          string   `yaml:"timezone"`
		SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys"`
		Packages          []any    `yaml:"packages"`
		Runcmd            []any    `yaml:"runcmd"`
		WriteFiles        []struct {
			Path, Encoding, Content string
		} `yaml:"write_files"`
	}
	if err := yaml.Unmarshal([]byte(userData), &doc); err != nil {
		t.Fatalf("user data does not parse: %v\n%s", err, userData)
	}
	if doc.Hostname != name {
		t.Errorf("hostname %q: the node must be named after its machine, not the pool-wide user data", doc.Hostname)
	}
	if doc.Timezone != "Europe/Berlin" {
		t.Errorf("the user's timezone was lost: %q", doc.Timezone)
	}
	found := false
	for _, k := range doc.SSHAuthorizedKeys {
		found = found || strings.TrimSpace(k) == publicKey
	}
	if !found {
		t.Errorf("the machine's SSH key %q is not authorized: %v", publicKey, doc.SSHAuthorizedKeys)
	}
	agent := false
	for _, p := range doc.Packages {
		agent = agent || p == "qemu-guest-agent"
	}
	if !agent {
		t.Errorf("qemu-guest-agent is not installed by cloud-init: packages %v", doc.Packages)
	}
	if n := len(doc.Runcmd); n == 0 || doc.Runcmd[n-1] != "sh /usr/local/custom_script/install.sh" {
		t.Errorf("Rancher's install script must run last; runcmd %v", doc.Runcmd)
	}
	for _, f := range doc.WriteFiles {
		if f.Path != "/usr/local/custom_script/install.sh" {
			continue
		}
		gz, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil || f.Encoding != "gzip+b64" {
			t.Fatalf("install.sh: encoding %q: %v", f.Encoding, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		script, _ := io.ReadAll(zr)
		if !strings.Contains(string(script), "echo registered") {
			t.Errorf("install.sh does not carry Rancher's script: %q", script)
		}
		return
	}
	t.Errorf("Rancher's install script is not written by cloud-init:\n%s", userData)
}

// failedCreate is a create that must fail, saying why, and leave nothing.
type failedCreate struct {
	name, image, inject, timeout string
	storageQuota                 string // Rancher's storage limit on the namespace
	extra                        []string
	want                         []string
}

// Each create that fails — at the pre-flight, on KubeVirt's or Harvester's admission, on a stuck VM, on the
// timeout — says why and leaves nothing. (An image that cannot be pulled: TestImagePullFailureLeavesNothing.)
func TestFailedCreatesLeaveNothing(t *testing.T) {
	b := testbed.Shared(t)
	tests := []failedCreate{
		{name: "iso image", image: "default/ubuntu-22.04-iso", want: []string{"is an ISO image", "boots cloud images only"}},
		{name: "unlabelled iso image", image: "default/k3os-iso-unlabelled", want: []string{"is an ISO image"}},
		{name: "image still importing", image: "default/rocky-9-importing", want: []string{"is still being imported (progress 42%)"}},
		// The driver accepts this MAC address; KubeVirt's admitter (pkg/network/admitter/binding.go) reserves it for
		// the in-pod bridge of a masquerade interface. The Secret made before the VM is removed again.
		{name: "refused by KubeVirt's admission",
			extra: []string{"--harvester-network-info", `{"interfaces":[{"type":"masquerade","macAddress":"02:00:00:00:00:00"}]}`},
			want: []string{`cannot create VirtualMachine`, `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: ` +
				`The requested MAC address is reserved for the in-pod bridge. Please choose another one.`}},
		// Harvester's validator (pkg/util/resourcequota) adds up the disks of the volumeClaimTemplates annotation
		// against the namespace's quota: 10Gi do not fit in 5Gi.
		{name: "refused by Harvester's admission", storageQuota: "5Gi",
			want: []string{`cannot create VirtualMachine`, `admission webhook "validator.harvesterhci.io" denied the request: ` +
				`storage insufficient resources due to resource quota`}},
		{name: "unschedulable", inject: standin.InjectUnschedulable, want: []string{"no Harvester host can run the VM (ErrorUnschedulable)", "Insufficient memory"}},
		{name: "ip never appears", inject: standin.InjectNoAgent, timeout: "5",
			want: []string{"timed out after 5s waiting for VM", "guest agent not connected", "qemu-guest-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, b) })
	}
}

// An image KubeVirt cannot pull (the launcher's, on a real Harvester) fails the create once the pull has failed
// for the driver's grace (a pull may fail once and succeed on retry), about a minute. The test waits for that
// grace and does little else, so it runs in parallel: at the package's end, beside the real guests.
func TestImagePullFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	failedCreate{name: "image pull error", inject: standin.InjectImagePullError, want: []string{"cannot pull a container image"}}.run(t, testbed.Shared(t))
}

func (tt failedCreate) run(t *testing.T, b *testbed.Bed) {
	ns := b.Namespace(t)
	if tt.inject != "" {
		annotateNamespace(t, b, ns, standin.AnnotationInject, tt.inject)
	}
	if tt.storageQuota != "" {
		limitStorage(t, b, ns, tt.storageQuota)
	}
	cli := newCLI(t, b.AdminKubeconfig())
	args := createArgs(t, ns)
	if tt.image != "" {
		args = append(args, "--harvester-image-name", tt.image)
	}
	if tt.timeout != "" {
		args = append(args, "--harvester-create-timeout", tt.timeout)
	}
	args = append(args, tt.extra...)
	r := cli.run(append(args, "m1")...)
	if r.Err == nil {
		t.Fatalf("create succeeded: %s", r)
	}
	t.Logf("what the user sees:\n%s", r.Output)
	for _, want := range tt.want {
		if !strings.Contains(r.Output, want) {
			t.Errorf("the error does not say %q:\n%s", want, r.Output)
		}
	}
	nothingLeft(t, b, ns)
}

// Rancher's cloud credentials expire (harvester/harvester#5827): the machine must still be removable with the
// renewed credential, and the old one must fail loudly instead of leaking the VM.
func TestRemoveAfterCredentialRotation(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	spec := credential.Spec{Namespace: ns, Name: "rancher", SecretName: "rancher-token-old", ClusterRoles: []string{"cluster-admin"}}
	old, err := b.Credential(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	cli := newCLI(t, old.Kubeconfig)
	cli.must(append(createArgs(t, ns), "m1")...)

	spec.SecretName = "rancher-token-new"
	renewed, err := b.Credential(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	r := cli.run("rm", "-y", "--update-config", "m1")
	if r.Err == nil || !strings.Contains(r.Output, "401 Unauthorized") || strings.Contains(strings.ToLower(r.Output), "not found") {
		t.Fatalf("rm with the revoked credential must fail and say why, without the words that make rm drop the machine: %s", r)
	}
	if _, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the VM is gone after a failed rm: %v", err)
	}
	cli.setCredential(renewed.Kubeconfig)
	cli.must("rm", "-y", "--update-config", "m1")
	nothingLeft(t, b, ns)
}

// 20 machines created and removed at once: all succeed, nothing is left.
func TestConcurrentMachines(t *testing.T) {
	const n = 20
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	clis := make([]*machineCLI, n)
	for i := range clis {
		clis[i] = newCLI(t, b.AdminKubeconfig())
	}
	each := func(args func(i int) []string) {
		var wg sync.WaitGroup
		for i := range clis {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := clis[i].run(args(i)...); r.Err != nil {
					t.Errorf("machine %d: %s", i, r)
				}
			}()
		}
		wg.Wait()
	}
	args := createArgs(t, ns)
	each(func(i int) []string { return append(append([]string{}, args...), machineName(i)) })
	vms, err := b.Virt.KubevirtV1().VirtualMachines(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(vms.Items) != n {
		t.Fatalf("%d VMs after %d creates (%v)", len(vms.Items), n, err)
	}
	each(func(i int) []string { return []string{"rm", "-y", machineName(i)} })
	nothingLeft(t, b, ns)
}

func machineName(i int) string { return "pool-" + string(rune('a'+i)) + "-x" }

// watchForZeroGrace watches vmi from the version read, and reports nil once it is seen with a zero grace period,
// or an error when it goes (or two minutes pass) without.
func watchForZeroGrace(t *testing.T, b *testbed.Bed, vmi *kubevirtv1.VirtualMachineInstance) <-chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	w, err := b.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + vmi.Name, ResourceVersion: vmi.ResourceVersion,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		defer cancel()
		defer w.Stop()
		for ev := range w.ResultChan() {
			seen, ok := ev.Object.(*kubevirtv1.VirtualMachineInstance)
			if !ok {
				continue
			}
			if g := seen.Spec.TerminationGracePeriodSeconds; g != nil && *g == 0 {
				result <- nil
				return
			}
			if ev.Type == watch.Deleted {
				result <- fmt.Errorf("VMI deleted with grace period %v", seen.Spec.TerminationGracePeriodSeconds)
				return
			}
		}
		result <- fmt.Errorf("no zero grace period seen: %w", ctx.Err())
	}()
	return result
}

// annotateNamespace sets an annotation on ns — a stand-in knob for every VM the driver will create in ns, or
// Rancher's quota, which Harvester's validator reads — and waits until Harvester's webhook holds the change (it
// reads namespaces from an informer, as on Harvester).
func annotateNamespace(t *testing.T, b *testbed.Bed, ns, key, value string) {
	t.Helper()
	ctx := context.Background()
	n, err := b.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[key] = value
	if _, err := b.Kube.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.Namespaces, "", ns); err != nil {
		t.Fatal(err)
	}
}

func vmiRunning(t *testing.T, b *testbed.Bed, ns, name string) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vmi, err := b.WaitVMI(ctx, ns, name, "running", func(vmi *kubevirtv1.VirtualMachineInstance, exists bool) bool {
		return exists && vmi.Status.Phase == kubevirtv1.Running && vmi.DeletionTimestamp == nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vmi
}

func vmiGone(t *testing.T, b *testbed.Bed, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.WaitVMI(ctx, ns, name, "gone", testbed.Gone[*kubevirtv1.VirtualMachineInstance]); err != nil {
		t.Fatal(err)
	}
}

// nothingLeft asserts that no VM, VMI, Secret or PVC remains in ns.
func nothingLeft(t *testing.T, b *testbed.Bed, ns string) {
	t.Helper()
	left, err := b.Leftovers(context.Background(), ns, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left behind in namespace %s: %v", ns, left)
	}
}
