package crds_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/crds"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/e2e/upstream"
)

// Installing again changes nothing; discovery serves every kind with the names clients use; Harvester's
// ClusterRoles exist; VirtualMachine status goes through its status subresource while VirtualMachineInstance,
// as in KubeVirt, has none.
func TestInstall(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{NoStandIn: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := upstream.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Install(ctx, bed.AdminConfig(), objs); err != nil {
		t.Fatalf("second install: %v", err)
	}

	want := map[string][]string{ // group/version -> resource names
		"kubevirt.io/v1": {"virtualmachines", "virtualmachines/status", "virtualmachineinstances", "kubevirts", "kubevirts/status",
			"virtualmachineinstancemigrations", "virtualmachineinstancemigrations/status"},
		"instancetype.kubevirt.io/v1beta1": {"virtualmachineinstancetypes", "virtualmachineclusterinstancetypes",
			"virtualmachinepreferences", "virtualmachineclusterpreferences"},
		"harvesterhci.io/v1beta1":              {"virtualmachineimages", "keypairs", "settings"},
		"k8s.cni.cncf.io/v1":                   {"network-attachment-definitions"},
		"loadbalancer.harvesterhci.io/v1beta1": {"ippools"}, // mirrored, see crds.LoadBalancerIPPools
		"kubeovn.io/v1":                        {"subnets", "subnets/status"},
		"network.harvesterhci.io/v1alpha1": {"ippools", "ippools/status", "virtualmachinenetworkconfigs",
			"virtualmachinenetworkconfigs/status"}, // mirrored, see crds.ManagedDHCP
	}
	for gv, names := range want {
		list, err := bed.Kube.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery of %s: %v", gv, err)
		}
		var served []string
		short := map[string][]string{}
		for _, r := range list.APIResources {
			served = append(served, r.Name)
			short[r.Name] = r.ShortNames
		}
		for _, n := range names {
			if !slices.Contains(served, n) {
				t.Errorf("%s does not serve %s (serves %v)", gv, n, served)
			}
		}
		if gv == "kubevirt.io/v1" {
			if slices.Contains(served, "virtualmachineinstances/status") {
				t.Error("virtualmachineinstances has a status subresource; KubeVirt's has none")
			}
			if !slices.Contains(short["virtualmachines"], "vm") || !slices.Contains(short["virtualmachineinstances"], "vmi") {
				t.Errorf("short names %v, want vm and vmi", short)
			}
		}
	}
	for _, role := range []string{"harvesterhci.io:cloudprovider", "harvesterhci.io:csi-driver"} {
		if _, err := bed.Kube.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRole %s: %v", role, err)
		}
	}

	vms := bed.Virt.KubevirtV1().VirtualMachines("default")
	vm, err := vms.Create(ctx, haltedVM("typed"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm.Status.PrintableStatus = kubevirtv1.VirtualMachineStatusStopped
	if _, err := vms.UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("VM UpdateStatus: %v", err)
	}
	got, err := vms.Get(ctx, "typed", metav1.GetOptions{})
	if err != nil || got.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusStopped {
		t.Errorf("status after UpdateStatus: %q (err %v)", got.Status.PrintableStatus, err)
	}
	vmis := bed.Virt.KubevirtV1().VirtualMachineInstances("default")
	vmi, err := vmis.Create(ctx, &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Status.Phase = kubevirtv1.Running
	err = bed.Virt.KubevirtV1().RESTClient().Put().Namespace("default").Resource("virtualmachineinstances").
		Name("typed").SubResource("status").Body(vmi).Do(ctx).Error()
	if !apierrors.IsNotFound(err) {
		t.Errorf("VMI UpdateStatus: %v, want 404 (no status subresource)", err)
	}
	if upd, err := vmis.Update(ctx, vmi, metav1.UpdateOptions{}); err != nil || upd.Status.Phase != kubevirtv1.Running {
		t.Errorf("VMI status by Update: phase %q (err %v)", upd.Status.Phase, err)
	}
}

// KubeVirt's schema prunes what it does not know; everything the stand-in writes in VMI and VM status, the way
// virt-controller and virt-handler do, is known and kept: written and read back, it is unchanged.
func TestStandInStatusSurvivesPruning(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{NoStandIn: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	vms := bed.Virt.KubevirtV1().VirtualMachines("default")
	vm, err := vms.Create(ctx, haltedVM("status"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm.Status = kubevirtv1.VirtualMachineStatus{
		Created: true, Ready: true, PrintableStatus: kubevirtv1.VirtualMachineStatusRunning,
		StartFailure: &kubevirtv1.VirtualMachineStartFailure{ConsecutiveFailCount: 2, LastFailedVMIUID: "uid-1", RetryAfterTimestamp: &now},
		Conditions: []kubevirtv1.VirtualMachineCondition{{Type: kubevirtv1.VirtualMachineReady, Status: "True",
			Reason: "Ready", Message: "m", LastProbeTime: now, LastTransitionTime: now}},
	}
	got, err := vms.UpdateStatus(ctx, vm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Status, vm.Status) {
		t.Errorf("VM status changed on the way through the API server:\nsent %+v\ngot  %+v", vm.Status, got.Status)
	}

	vmis := bed.Virt.KubevirtV1().VirtualMachineInstances("default")
	vmi, err := vmis.Create(ctx, &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "status"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Labels = map[string]string{kubevirtv1.NodeNameLabel: "node-1"}
	vmi.Status = kubevirtv1.VirtualMachineInstanceStatus{
		Phase: kubevirtv1.Running, Reason: "GuestBootFailed", NodeName: "node-1",
		PhaseTransitionTimestamps: []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: kubevirtv1.Running, PhaseTransitionTimestamp: now}},
		Conditions: []kubevirtv1.VirtualMachineInstanceCondition{
			{Type: kubevirtv1.VirtualMachineInstanceReady, Status: "True", LastProbeTime: now, LastTransitionTime: now},
			{Type: kubevirtv1.VirtualMachineInstanceAgentConnected, Status: "True", LastProbeTime: now, LastTransitionTime: now},
			{Type: kubevirtv1.VirtualMachineInstanceSynchronized, Status: "False", Reason: "FailedPvcNotFound", Message: "m", LastProbeTime: now, LastTransitionTime: now},
			{Type: "PodScheduled", Status: "False", Reason: "Unschedulable", Message: "0/3 nodes", LastProbeTime: now, LastTransitionTime: now},
		},
		Interfaces: []kubevirtv1.VirtualMachineInstanceNetworkInterface{{Name: "nic-0", InterfaceName: "eth0", MAC: "52:54:00:00:00:01",
			IP: "10.0.0.2", IPs: []string{"10.0.0.2", "fd00:e2e::2"}, InfoSource: "domain, guest-agent"}},
		GuestOSInfo: kubevirtv1.VirtualMachineInstanceGuestOSInfo{Name: "Debian GNU/Linux", ID: "debian", Version: "12", VersionID: "12",
			PrettyName: "Debian GNU/Linux 12 (bookworm)", KernelRelease: "6.1.0", KernelVersion: "#1 SMP", Machine: "x86_64"},
	}
	upd, err := vmis.Update(ctx, vmi, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(upd.Status, vmi.Status) || upd.Labels[kubevirtv1.NodeNameLabel] != "node-1" {
		t.Errorf("VMI status changed on the way through the API server:\nsent %+v\ngot  %+v", vmi.Status, upd.Status)
	}
}

// haltedVM is the least VirtualMachine both admissions accept: halted, with the memory limit Harvester's validator
// requires (pkg/webhook/resources/virtualmachine/validator.go: "either memory.guest or resources.limits.memory
// must be set").
func haltedVM(name string) *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	// A CPU section, as every VM the driver makes has: without one Harvester's mutator patches cpu/maxSockets
	// before it adds the section (mutator.go Create: patchResourceOvercommit, then patchDefaultCPU), and the API
	// server cannot apply that patch (Internal error: "doc is missing path").
	return &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kubevirtv1.VirtualMachineSpec{RunStrategy: &halted, Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
			Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Cores: 1},
				Resources: kubevirtv1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}}
}
