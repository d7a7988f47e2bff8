package harvester

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// fakeCluster is the shared fake Harvester (kubefake.Cluster) as the driver's tests use it: seeded with what a
// machine needs, asked about every permission the driver checks, and imitating KubeVirt's VM controller
// (kubeVirt).
type fakeCluster struct{ *kubefake.Cluster }

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	fc := &fakeCluster{kubefake.New(t, connection.RenewCredential)}
	fc.Asked = slices.Concat(createAccess, kube.WatchMachineAccess, removeAccess, guestaccount.Access, ippool.Access, preflight.HostDeviceAccess, preflight.QuotaAccess, preflight.DataSecretAccess, preflight.VMPatchObjectAccess)
	fc.seed()
	return fc
}

// seed creates a namespace, a ready cloud image with its storage class, a blank-disk storage class, a network.
func (fc *fakeCluster) seed() {
	ctx := context.Background()
	fc.Namespace("default")
	fc.addImage("default", "ubuntu", readyImage)
	for _, class := range []string{"longhorn-ubuntu", "longhorn"} {
		fc.OK(kube.Create(ctx, fc.C, kube.StorageClasses, "", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "driver.longhorn.io"}))
	}
	fc.addNetwork("default", "vlan1", `{"cniVersion":"0.3.1","name":"vlan1","type":"bridge","bridge":"mgmt-br","promiscMode":true,"vlan":1,"ipam":{}}`)
}

// addNetwork makes VM network namespace/name with CNI configuration config (a bridge's, as Harvester's network
// controller writes it, or a Kube-OVN overlay network's).
func (fc *fakeCluster) addNetwork(namespace, name, config string) {
	nad := &kube.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	nad.Spec.Config = config
	fc.OK(kube.Create(context.Background(), fc.C, kube.Networks, namespace, nad))
}

func readyImage(img *kube.VirtualMachineImage) {
	img.Spec.DisplayName = img.Name + ".qcow2"
	img.Labels = map[string]string{kube.LabelImageType: "raw_qcow2"}
	img.Status.Progress = 100
	img.Status.StorageClassName = "longhorn-" + img.Name
	img.Status.Conditions = []kube.Condition{{Type: kube.ConditionImported, Status: corev1.ConditionTrue}}
}

func (fc *fakeCluster) addImage(ns, name string, shape ...func(*kube.VirtualMachineImage)) {
	img := &kube.VirtualMachineImage{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, f := range shape {
		f(img)
	}
	fc.OK(kube.Create(context.Background(), fc.C, kube.Images, ns, img))
}

// objects counts what exists: VMs, VMIs, Secrets.
func (fc *fakeCluster) objects() (vms, vmis, secrets int) {
	ctx := context.Background()
	vmList, err := fc.KV.KubevirtV1().VirtualMachines("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	vmiList, err := fc.KV.KubevirtV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	secretList, err := kube.List(ctx, fc.C, kube.Secrets, "", metav1.ListOptions{})
	if err != nil {
		fc.T.Fatal(err)
	}
	return len(vmList.Items), len(vmiList.Items), len(secretList)
}

// nothingLeft fails t when a VM, a VMI or a Secret exists.
func (fc *fakeCluster) nothingLeft(t *testing.T) {
	t.Helper()
	if vms, vmis, secrets := fc.objects(); vms+vmis+secrets != 0 {
		t.Errorf("left behind: %d VMs, %d VMIs, %d Secrets", vms, vmis, secrets)
	}
}

// vmiShape decides what the imitated KubeVirt reports for a VM's VMI: its phase, its interfaces, the VM's
// printableStatus. nil means a healthy VM that runs with 10.0.0.5 on nic-0 at once.
type vmiShape func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus

func healthy(ip string) vmiShape {
	return func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
		vmi.Status.Phase = kubevirtv1.Running
		vmi.Status.Interfaces = []kubevirtv1.VirtualMachineInstanceNetworkInterface{{Name: config.PrimaryNIC, IP: ip, IPs: []string{ip}, InterfaceName: "eth0"}}
		vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue}}
		return kubevirtv1.VirtualMachineStatusRunning
	}
}

// kubeVirt imitates KubeVirt's VM controller until the test ends: a VM whose runStrategy changes to one that
// runs gets a VMI (KubeVirt starts a RerunOnFailure VM only on a change of strategy, recorded in
// status.runStrategy); Halted deletes the VMI; a deleted VMI disappears. shape fills in each VMI.
func (fc *fakeCluster) kubeVirt(shape vmiShape) {
	fc.OnVMs(func(ctx context.Context, vm *kubevirtv1.VirtualMachine, deleted bool) {
		if deleted {
			_ = fc.KV.KubevirtV1().VirtualMachineInstances(vm.Namespace).Delete(ctx, vm.Name, metav1.DeleteOptions{})
			return
		}
		fc.reconcile(ctx, vm, shape)
	})
}

func (fc *fakeCluster) reconcile(ctx context.Context, vm *kubevirtv1.VirtualMachine, shape vmiShape) {
	vms, vmis := fc.KV.KubevirtV1().VirtualMachines(vm.Namespace), fc.KV.KubevirtV1().VirtualMachineInstances(vm.Namespace)
	rs := kubevirtv1.RunStrategyHalted
	if vm.Spec.RunStrategy != nil {
		rs = *vm.Spec.RunStrategy
	}
	if rs == vm.Status.RunStrategy {
		return // nothing changed that KubeVirt acts on
	}
	status := kubevirtv1.VirtualMachineStatusStopped
	if rs == kubevirtv1.RunStrategyHalted {
		_ = vmis.Delete(ctx, vm.Name, metav1.DeleteOptions{})
	} else {
		// Owned by its VM as KubeVirt makes it (kubevirt.io/kubevirt v1.9.0 pkg/virt-controller/watch/vm/vm.go,
		// setupVMIFromVM: a controller reference that blocks the VM's deletion).
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace, Labels: vm.Spec.Template.ObjectMeta.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, kubevirtv1.VirtualMachineGroupVersionKind)}}}
		if shape == nil {
			shape = healthy("10.0.0.5")
		}
		status = shape(vm, vmi)
		if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fc.T.Errorf("kubeVirt: creating VMI: %v", err)
		}
	}
	fresh, err := vms.Get(ctx, vm.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	fresh.Status.RunStrategy = rs
	fresh.Status.PrintableStatus = status
	_, _ = vms.UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
}

// newTestDriver returns a driver configured from opts, talking to fc, with its store in a temp dir.
func newTestDriver(t *testing.T, fc *fakeCluster, machine string, opts config.Options) *Driver {
	t.Helper()
	d := NewDriver(machine, t.TempDir())
	if err := d.SetConfigFromFlags(opts); err != nil {
		t.Fatal(err)
	}
	d.clients = fc.C
	return d
}

// checkedDriver is newTestDriver after its PreCreateCheck, as rancher-machine runs it before Create: faults a test
// injects after it meet the create alone.
func checkedDriver(t *testing.T, fc *fakeCluster, machine string, opts config.Options) *Driver {
	t.Helper()
	d := newTestDriver(t, fc, machine, opts)
	if err := d.PreCreateCheck(); err != nil {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	return d
}

// verbChecks runs d's pre-flight as the check verb does (PreflightPool), the cluster's admission asked last, and
// returns its checks.
func (d *Driver) verbChecks(t *testing.T) []preflight.Check {
	t.Helper()
	_, public, err := d.machineKey()
	if err != nil {
		t.Fatal(err)
	}
	return d.preflight(context.Background(), &preflight.Admission{SSHKey: public}).Checks
}
