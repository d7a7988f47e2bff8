package scenarios

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/apiproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/vmspec"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// faultScenario is one fault a Harvester or a Rancher provisioning pod really meets, injected while machine m1 is
// created and removed through the real rancher-machine. Each shows that the create succeeds, or fails naming the
// cause, within its bound (its --harvester-create-timeout, the CLI's limit); that the next rm succeeds; that
// nothing of the machine is left (VM, VMI, volumes, Secret); and that nothing that is not the machine's is
// touched: another machine's VM, volume and cloud-init Secret made beforehand in the same namespace (and in one
// scenario a VM of the machine's name made by someone else) keep their UID and resourceVersion. The table
// "Fault scenarios" of docs/testing.md lists them.
type faultScenario struct {
	name string
	// controlPlane: the fault stops or restarts a server of the control plane, which would disturb every other
	// test of a shared bed; these run one after the other on a bed of their own.
	controlPlane bool
	run          func(t *testing.T, f *faulted)
}

// The faults of the network are injected by a proxy between the plugin and the API server (package apiproxy),
// one for each scenario; those of the control plane by pausing (SIGSTOP) or restarting its servers.
var faultScenarios = []faultScenario{
	{name: "APIServerPausedAndRestartedWhileACreateWaits", controlPlane: true, run: apiServerPausedAndRestarted},
	{name: "EtcdPausedDuringTheWrites", controlPlane: true, run: etcdPausedDuringTheWrites},
	{name: "ManyMachinesWhileTheAPIServerPauses", controlPlane: true, run: manyMachinesWhileTheAPIServerPauses},
	{name: "PluginKilledAfterItsVMExistsAndDuringRm", run: pluginKilled},
	{name: "AnswerLostAfterTheServerWroteTheVM", run: answerLost},
	{name: "WatchesCutEveryFewSeconds", run: watchesCut},
	{name: "TooManyRequestsAndUnavailable", run: throttledAndUnavailable},
	{name: "VMNeverGetsAnAddress", run: neverAnAddress},
	{name: "TwoRmAtOnce", run: twoRmAtOnce},
	{name: "VMOfTheSameNameMadeBySomeoneElse", run: someoneElsesVM},
}

// TestFaults runs the fault scenarios: those of the network at once on the shared bed, each in its own namespace
// behind its own proxy; those of the control plane meanwhile, one after the other, on a bed of their own.
func TestFaults(t *testing.T) {
	shared := testbed.Shared(t)
	start := time.Now()
	t.Run("ControlPlane", func(t *testing.T) {
		t.Parallel()
		b := testbed.StartT(t, testbed.Options{})
		for _, s := range faultScenarios {
			if s.controlPlane {
				t.Run(s.name, func(t *testing.T) { s.exec(t, b) })
			}
		}
	})
	for _, s := range faultScenarios {
		if !s.controlPlane {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				s.exec(t, shared)
			})
		}
	}
	t.Cleanup(func() { t.Logf("the fault scenarios took %v", time.Since(start).Round(time.Second)) })
}

func (s faultScenario) exec(t *testing.T, b *testbed.Bed) {
	start := time.Now()
	f := &faulted{t: t, b: b, ns: b.Namespace(t), bystanders: map[string]string{}}
	f.anotherMachine()
	s.run(t, f)
	f.bystandersUntouched()
	t.Logf("%s: %v", s.name, time.Since(start).Round(100*time.Millisecond))
}

// faulted is one fault scenario's namespace on its bed: the machine m1 and the bystanders.
type faulted struct {
	t  *testing.T
	b  *testbed.Bed
	ns string
	// bystanders are the objects that are not the machine's: "Kind name" → "uid@resourceVersion" as first seen.
	bystanders map[string]string
}

const machine = "m1"

// args are the create arguments of machine m1 (createArgs), extra flags after them.
func (f *faulted) args(extra ...string) []string {
	return append(createArgs(f.t, f.ns, extra...), machine)
}

// proxy starts a proxy to the bed's API server for the scenario's plugin.
func (f *faulted) proxy() *apiproxy.Proxy { return startProxy(f.t, f.b.AdminConfig()) }

// vmPath is the API path of the namespace's VMs.
func (f *faulted) vmPath() string {
	return "/apis/kubevirt.io/v1/namespaces/" + f.ns + "/virtualmachines"
}

// start runs rancher-machine with args in the background.
func (f *faulted) start(cli *machineCLI, args ...string) <-chan rmachine.Result {
	done := make(chan rmachine.Result, 1)
	go func() { done <- cli.run(args...) }()
	return done
}

// succeeded fails the test unless create result r reported the machine running.
func (f *faulted) succeeded(r rmachine.Result) {
	f.t.Helper()
	if r.Err != nil || !strings.Contains(r.Output, "VM "+f.ns+"/"+machine+" is running at") {
		f.t.Fatalf("the create must succeed: %s", r)
	}
}

// failedWith fails the test unless create result r failed saying each of want, its rollback complete.
func (f *faulted) failedWith(r rmachine.Result, want ...string) {
	f.t.Helper()
	if r.Err == nil {
		f.t.Fatalf("the create must fail: %s", r)
	}
	f.t.Logf("what the user sees:\n%s", r.Output)
	for _, w := range append(want, "Create failed; removing what it made") {
		if !strings.Contains(r.Output, w) {
			f.t.Errorf("the create's error does not say %q", w)
		}
	}
	if strings.Contains(r.Output, "the cleanup after it also failed") {
		f.t.Errorf("the rollback left objects behind")
	}
}

// rmLeavesNothing runs rm of the machine, which must succeed, and checks that nothing of the machine is left.
func (f *faulted) rmLeavesNothing(cli *machineCLI) rmachine.Result {
	f.t.Helper()
	r := cli.runWithin(5*time.Minute, "rm", "-y", machine)
	if r.Err != nil {
		f.t.Fatalf("rm after the fault: %s", r)
	}
	f.t.Logf("rm:\n%s", r.Output)
	f.nothingOfTheMachineLeft()
	return r
}

// nothingOfTheMachineLeft checks that the namespace holds no VM, VMI, Secret or PVC but the bystanders.
func (f *faulted) nothingOfTheMachineLeft() {
	f.t.Helper()
	left, err := f.b.Leftovers(context.Background(), f.ns, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a removed VM's volumes go after it, their finalizer after that
	for {
		var machines []string
		for _, o := range left {
			if _, ok := f.bystanders[o]; !ok {
				machines = append(machines, o)
			}
		}
		if len(machines) == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("left of the machine in namespace %s: %v", f.ns, machines)
		}
		time.Sleep(200 * time.Millisecond)
		if left, err = f.b.Leftovers(context.Background(), f.ns, 0); err != nil {
			f.t.Fatal(err)
		}
	}
}

// anotherMachine makes the bystanders every scenario has: another machine of this driver in the namespace,
// stopped — its VM (made by another create), its volume and its cloud-init Secret — once KubeVirt's controller
// and the stand-in have done with them.
func (f *faulted) anotherMachine() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vm := vmspec.VM(f.ns, "other", "default/vm-untag", vmspec.Disk{Image: "default/ubuntu-22.04",
		StorageClass: f.b.Seeded.ImageStorageClass["default/ubuntu-22.04"]})
	halted := kubevirtv1.RunStrategyHalted
	vm.Spec.RunStrategy = &halted
	vm.Annotations["node-driver.harvesterhci.io/create-id"] = "another-create"
	vm, err := f.b.Virt.KubevirtV1().VirtualMachines(f.ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.b.Kube.CoreV1().Secrets(f.ns).Create(ctx, vmspec.OwnedSecret(vm), metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.settledVM(ctx, "other")
	if _, err := f.b.WaitPVC(ctx, f.ns, vmspec.ClaimName("other", 0), "Bound", func(pvc *corev1.PersistentVolumeClaim, ok bool) bool {
		return ok && pvc.Status.Phase == corev1.ClaimBound
	}); err != nil {
		f.t.Fatal(err)
	}
	f.snapshotBystanders()
}

// settledVM waits until KubeVirt's controller and the stand-in have done with a stopped VM: it is Stopped and
// carries both their finalizers.
func (f *faulted) settledVM(ctx context.Context, name string) {
	f.t.Helper()
	if _, err := f.b.WaitVM(ctx, f.ns, name, "stopped, with its controllers' finalizers", func(vm *kubevirtv1.VirtualMachine, ok bool) bool {
		return ok && vm.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusStopped && len(vm.Finalizers) >= 2
	}); err != nil {
		f.t.Fatal(err)
	}
}

// snapshotBystanders records every object of the namespace the machine has not made yet as a bystander.
func (f *faulted) snapshotBystanders() {
	f.t.Helper()
	for k, v := range f.objects() {
		f.bystanders[k] = v
	}
}

// bystandersUntouched checks that each bystander is still there with its UID and resourceVersion.
func (f *faulted) bystandersUntouched() {
	f.t.Helper()
	now := f.objects()
	for k, was := range f.bystanders {
		if is := now[k]; is != was {
			f.t.Errorf("%s is not as it was before the fault: uid@resourceVersion %s, now %q", k, was, is)
		}
	}
}

// objects lists the VMs, VMIs, Secrets and PVCs of the namespace as "Kind name" → "uid@resourceVersion".
func (f *faulted) objects() map[string]string {
	f.t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	add := func(kind string, list runtime.Object, err error) {
		if err != nil {
			f.t.Fatal(err)
		}
		items, _ := meta.ExtractList(list)
		for _, item := range items {
			if s, ok := item.(*corev1.Secret); ok && s.Type == corev1.SecretTypeServiceAccountToken {
				continue
			}
			m, _ := meta.Accessor(item)
			out[kind+" "+m.GetName()] = string(m.GetUID()) + "@" + m.GetResourceVersion()
		}
	}
	vms, err := f.b.Virt.KubevirtV1().VirtualMachines(f.ns).List(ctx, metav1.ListOptions{})
	add("VM", vms, err)
	vmis, err := f.b.Virt.KubevirtV1().VirtualMachineInstances(f.ns).List(ctx, metav1.ListOptions{})
	add("VMI", vmis, err)
	secrets, err := f.b.Kube.CoreV1().Secrets(f.ns).List(ctx, metav1.ListOptions{})
	add("Secret", secrets, err)
	pvcs, err := f.b.Kube.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{})
	add("PVC", pvcs, err)
	return out
}

// pause pauses a server of the control plane for d.
func (f *faulted) pause(server string, d time.Duration) {
	f.t.Helper()
	resume, err := f.b.ControlPlane.Pause(server)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(resume)
	time.Sleep(d)
	resume()
}

// arrives waits (bounded) for a fault's first request.
func (f *faulted) arrives(fault *apiproxy.Fault, what string) {
	f.t.Helper()
	select {
	case <-fault.Arrived():
	case <-time.After(2 * time.Minute):
		f.t.Fatalf("%s never came", what)
	}
}

// The API server stops answering (SIGSTOP: its connections stay open) while the create waits for the IP, then
// restarts: the create's watch resumes and it succeeds.
func apiServerPausedAndRestarted(t *testing.T, f *faulted) {
	annotateNamespace(t, f.b, f.ns, standin.AnnotationIPDelay, "10s")
	cli := newCLI(t, f.b.AdminKubeconfig())
	done := f.start(cli, f.args()...)
	vmiRunning(t, f.b, f.ns, machine)
	f.pause(controlplane.APIServer, 3*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.b.ControlPlane.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	f.succeeded(<-done)
	f.rmLeavesNothing(cli)
}

// etcd stops answering while the API server writes the cloud-init Secret, and again while it writes the VM: each
// write waits, and the create succeeds.
func etcdPausedDuringTheWrites(t *testing.T, f *faulted) {
	p := f.proxy()
	secretGate, vmGate := make(chan struct{}), make(chan struct{})
	secret := p.Hold(apiproxy.Method(http.MethodPost, "/api/v1/namespaces/"+f.ns+"/secrets"), secretGate).Times(1)
	vm := p.Hold(apiproxy.Method(http.MethodPost, f.vmPath()), vmGate).Times(1)
	cli := newCLI(t, p.Kubeconfig())
	done := f.start(cli, f.args()...)
	for _, w := range []struct {
		held *apiproxy.Fault
		gate chan struct{}
		what string
	}{{secret, secretGate, "the cloud-init Secret's create"}, {vm, vmGate, "the VM's create"}} {
		f.arrives(w.held, w.what)
		resume, err := f.b.ControlPlane.Pause(controlplane.Etcd)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(resume)
		close(w.gate) // the write reaches the API server while etcd is paused
		time.Sleep(3 * time.Second)
		resume()
	}
	f.succeeded(<-done)
	f.rmLeavesNothing(cli)
}

// Six machines are created at once, and the API server stops answering for 3 s once their first VM exists: all
// are created, and all removed at once.
func manyMachinesWhileTheAPIServerPauses(t *testing.T, f *faulted) {
	const n = 6
	annotateNamespace(t, f.b, f.ns, standin.AnnotationIPDelay, "3s")
	names := make([]string, n)
	results := make([]<-chan rmachine.Result, n)
	clis := make([]*machineCLI, n)
	args := createArgs(t, f.ns)
	for i := range n {
		names[i] = fmt.Sprintf("m%d", i+1)
		clis[i] = newCLI(t, f.b.AdminKubeconfig())
		results[i] = f.start(clis[i], append(append([]string{}, args...), names[i])...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := f.b.WaitVM(ctx, f.ns, names[0], "created", func(_ *kubevirtv1.VirtualMachine, ok bool) bool { return ok }); err != nil {
		t.Fatal(err)
	}
	f.pause(controlplane.APIServer, 3*time.Second)
	for i, done := range results {
		if r := <-done; r.Err != nil || !strings.Contains(r.Output, "is running at") {
			t.Errorf("machine %s: %s", names[i], r)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := clis[i].run("rm", "-y", names[i]); r.Err != nil {
				t.Errorf("rm %s: %s", names[i], r)
			}
		}()
	}
	wg.Wait()
	f.nothingOfTheMachineLeft()
}

// rancher-machine and the plugin are killed (SIGKILL, as when Rancher's provisioning pod is deleted) once the VM
// exists and the create waits for it, and again while rm removes it, its volumes marked for removal and its delete
// on the way: the next rm finds the VM by the create's id (the killed create never recorded its UID) and removes
// everything.
func pluginKilled(t *testing.T, f *faulted) {
	annotateNamespace(t, f.b, f.ns, standin.AnnotationIPDelay, "60s")
	p := f.proxy()
	cli := newCLI(t, p.Kubeconfig())
	waiting := "Waiting for VM " + f.ns + "/" + machine + " to run"
	if r := cli.runUntil(waiting, f.args()...); !strings.Contains(r.Output, waiting) {
		t.Fatalf("the create did not come to its wait: %s", r)
	}
	if _, err := f.b.Virt.KubevirtV1().VirtualMachines(f.ns).Get(context.Background(), machine, metav1.GetOptions{}); err != nil {
		t.Fatalf("the killed create's VM: %v", err)
	}
	if uid := savedVMUID(t, cli); uid != "" {
		t.Fatalf("the killed create recorded its VM's UID %s: the scenario needs one that did not", uid)
	}

	deletes := p.Hold(apiproxy.Method(http.MethodDelete, f.vmPath()+"/"+machine), nil)
	ctx, kill := context.WithCancel(context.Background())
	killed := make(chan rmachine.Result, 1)
	go func() { killed <- cli.Run(ctx, nil, "rm", "-y", machine) }()
	f.arrives(deletes, "the first rm's delete of the VM")
	kill()
	<-killed
	deletes.Stop()
	vm, err := f.b.Virt.KubevirtV1().VirtualMachines(f.ns).Get(context.Background(), machine, metav1.GetOptions{})
	if err != nil || vm.DeletionTimestamp != nil || vm.Annotations["harvesterhci.io/removedPersistentVolumeClaims"] == "" {
		t.Fatalf("the killed rm must have marked the VM's volumes and not deleted it: %v %+v", err, vm)
	}
	if _, err := os.Stat(filepath.Join(cli.Store, "machines", machine)); err != nil {
		t.Fatalf("the killed rm dropped the machine: %v", err)
	}
	f.rmLeavesNothing(cli)
}

// The API server makes the VM, but the answer never reaches the plugin (the connection is reset), and the
// rollback's first read of the VM meets a 503: the create fails naming the lost connection, and its rollback,
// retrying the read, finds the VM by the create's id and removes it with its volume and Secret.
func answerLost(t *testing.T, f *faulted) {
	p := f.proxy()
	lost := p.LoseAnswer(apiproxy.Method(http.MethodPost, f.vmPath())).Times(1)
	afterLost := func(r *http.Request) bool {
		return lost.Taken() > 0 && r.Method == http.MethodGet && r.URL.Path == f.vmPath()+"/"+machine
	}
	unavailable := p.Answer(afterLost, http.StatusServiceUnavailable, 0).Times(1)
	cli := newCLI(t, p.Kubeconfig())
	r := cli.run(f.args()...)
	f.failedWith(r, "cannot create VirtualMachine "+f.ns+"/"+machine+": Harvester at "+strings.TrimPrefix(p.URL, "http://")+" is unreachable",
		"The answer to the VM's create was lost, but the API server made it")
	if lost.Taken() != 1 || unavailable.Taken() != 1 {
		t.Errorf("the answer was lost %d times, the rollback's read met %d 503s; want 1 and 1", lost.Taken(), unavailable.Taken())
	}
	f.nothingOfTheMachineLeft()
	f.rmLeavesNothing(cli)
}

// Every watch the plugin opens is cut after 2 s, without the end a watch normally has, while the VM takes 8 s to
// report its IP: the create's watches resume and it succeeds; rm's wait for the VM to go resumes too.
func watchesCut(t *testing.T, f *faulted) {
	annotateNamespace(t, f.b, f.ns, standin.AnnotationIPDelay, "8s")
	p := f.proxy()
	cut := p.Cut(apiproxy.Watches, 2*time.Second)
	cli := newCLI(t, p.Kubeconfig())
	f.succeeded(cli.run(f.args()...))
	if cut.Taken() < 3 { // the VM's and the VMI's watch, and at least one resumed
		t.Errorf("%d watches, none resumed after a cut", cut.Taken())
	}
	f.rmLeavesNothing(cli)
}

// The API server sheds load: the plugin's first requests are answered 429 with Retry-After (as priority and
// fairness does), then every read 503 for 5 s once the VM is made, and rm's first update and delete of the VM
// 503: client-go waits out the 429s, the create's watches retry, rm retries its writes, and both succeed.
func throttledAndUnavailable(t *testing.T, f *faulted) {
	annotateNamespace(t, f.b, f.ns, standin.AnnotationIPDelay, "3s")
	p := f.proxy()
	throttled := p.Answer(apiproxy.All, http.StatusTooManyRequests, 1).Times(4)
	vmPosted := p.Observe(apiproxy.Method(http.MethodPost, f.vmPath()))
	vm := f.vmPath() + "/" + machine
	update := p.Answer(apiproxy.Method(http.MethodPut, vm), http.StatusServiceUnavailable, 0).Times(1)
	del := p.Answer(apiproxy.Method(http.MethodDelete, vm), http.StatusServiceUnavailable, 0).Times(1)
	cli := newCLI(t, p.Kubeconfig())
	done := f.start(cli, f.args()...)
	f.arrives(vmPosted, "the VM's create")
	reads := p.Answer(func(r *http.Request) bool { return r.Method == http.MethodGet }, http.StatusServiceUnavailable, 0)
	time.Sleep(5 * time.Second)
	reads.Stop()
	f.succeeded(<-done)
	rethrottled := p.Answer(apiproxy.All, http.StatusTooManyRequests, 1).Times(2)
	f.rmLeavesNothing(cli)
	for what, fault := range map[string]*apiproxy.Fault{"429 to the create": throttled, "503 to reads": reads, "503 to rm's update": update,
		"503 to rm's delete": del, "429 to rm": rethrottled} {
		if fault.Taken() == 0 {
			t.Errorf("%s: no request met it", what)
		}
	}
}

// The guest agent connects but the guest never gets an address: the create fails at its timeout, saying what
// it waited for and what it last saw. (20 s: the VM runs long before, even with the other scenarios beside it.)
func neverAnAddress(t *testing.T, f *faulted) {
	annotateNamespace(t, f.b, f.ns, standin.AnnotationInject, standin.InjectNoIP)
	cli := newCLI(t, f.b.AdminKubeconfig())
	r := cli.run(f.args("--harvester-create-timeout", "20")...)
	f.failedWith(r, "timed out after 20s waiting for VM "+f.ns+"/"+machine+" to run and report an IP", "guest agent connected, nic-0 has no IP")
	f.rmLeavesNothing(cli)
}

// Two rm of the machine run at once, from two copies of its state (two provisioning pods of Rancher, say), both
// past their first read before either removes anything: both succeed.
func twoRmAtOnce(t *testing.T, f *faulted) {
	p := f.proxy()
	first := newCLI(t, p.Kubeconfig())
	f.succeeded(first.run(f.args()...))
	second := newCLI(t, p.Kubeconfig())
	if err := os.CopyFS(filepath.Join(second.Store, "machines"), os.DirFS(filepath.Join(first.Store, "machines"))); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	reads := p.Hold(apiproxy.Method(http.MethodGet, f.vmPath()+"/"+machine), gate).Times(2)
	results := []<-chan rmachine.Result{f.start(first, "rm", "-y", machine), f.start(second, "rm", "-y", machine)}
	select {
	case <-reads.Arrivals(2):
	case <-time.After(2 * time.Minute):
		t.Fatal("the two rm never both read the VM")
	}
	close(gate)
	for _, done := range results {
		if r := <-done; r.Err != nil {
			t.Errorf("rm: %s", r)
		}
	}
	f.nothingOfTheMachineLeft()
}

// Someone else makes a VM of the machine's name after the create's pre-flight and before its VM: the create
// fails on it, its rollback removes only the Secret it made, and rm leaves that VM, which is not the machine's.
func someoneElsesVM(t *testing.T, f *faulted) {
	p := f.proxy()
	gate := make(chan struct{})
	secret := p.Hold(apiproxy.Method(http.MethodPost, "/api/v1/namespaces/"+f.ns+"/secrets"), gate).Times(1)
	cli := newCLI(t, p.Kubeconfig())
	done := f.start(cli, f.args()...)
	f.arrives(secret, "the cloud-init Secret's create")
	theirs := vmspec.VM(f.ns, machine, "default/vm-untag", vmspec.Disk{Image: "default/ubuntu-22.04",
		StorageClass: f.b.Seeded.ImageStorageClass["default/ubuntu-22.04"]})
	theirs.Labels, theirs.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "theirs"}, nil
	halted := kubevirtv1.RunStrategyHalted
	theirs.Spec.RunStrategy = &halted
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.b.Virt.KubevirtV1().VirtualMachines(f.ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settledVM(ctx, machine)
	if _, err := f.b.WaitPVC(ctx, f.ns, vmspec.ClaimName(machine, 0), "Bound", func(pvc *corev1.PersistentVolumeClaim, ok bool) bool {
		return ok && pvc.Status.Phase == corev1.ClaimBound
	}); err != nil {
		t.Fatal(err)
	}
	f.snapshotBystanders() // their VM and volume (the create's Secret is held)
	close(gate)
	f.failedWith(<-done, "cannot create VirtualMachine "+f.ns+"/"+machine, "already exists")
	r := f.rmLeavesNothing(cli)
	if !strings.Contains(r.Output, "is not this machine's") || !strings.Contains(r.Output, "was left alone") {
		t.Errorf("rm does not say it left their VM alone:\n%s", r.Output)
	}
}
