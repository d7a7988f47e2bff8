package harvester

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/log"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kvfake "kubevirt.io/client-go/kubevirt/fake"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// fakeCluster is a Harvester made of client-go fakes: KubeVirt's generated fake clientset for VMs and VMIs, the
// dynamic fake for the rest. Reactors inject failures; kubeVirt imitates KubeVirt's VM controller.
type fakeCluster struct {
	t      *testing.T
	kv     *kvfake.Clientset
	dyn    *dynamicfake.FakeDynamicClient
	c      kube.Interface
	uids   atomic.Int64
	denied map[string]bool // "verb resource" the rules and access reviews deny
	// rulesIncomplete makes the rules reviews answer incomplete, as with an authorizer that cannot list rules.
	rulesIncomplete bool
}

var fakeListKinds = map[schema.GroupVersionResource]string{
	{Version: "v1", Resource: "secrets"}:                                                  "SecretList",
	{Version: "v1", Resource: "persistentvolumeclaims"}:                                   "PersistentVolumeClaimList",
	{Version: "v1", Resource: "namespaces"}:                                               "NamespaceList",
	{Version: "v1", Resource: "nodes"}:                                                    "NodeList",
	{Version: "v1", Resource: "pods"}:                                                     "PodList",
	{Version: "v1", Resource: "resourcequotas"}:                                           "ResourceQuotaList",
	{Version: "v1", Resource: "serviceaccounts"}:                                          "ServiceAccountList",
	{Version: "v1", Resource: "configmaps"}:                                               "ConfigMapList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}:         "ClusterRoleList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}:         "RoleBindingList",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}:  "ClusterRoleBindingList",
	{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                  "StorageClassList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "virtualmachineimages"}:      "VirtualMachineImageList",
	{Group: "harvesterhci.io", Version: "v1beta1", Resource: "keypairs"}:                  "KeyPairList",
	{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}: "NetworkAttachmentDefinitionList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}:  "SelfSubjectAccessReviewList",
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"}:   "SelfSubjectRulesReviewList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcidevices"}:        "PCIDeviceList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "pcideviceclaims"}:   "PCIDeviceClaimList",
	{Group: "devices.harvesterhci.io", Version: "v1beta1", Resource: "usbdevices"}:        "USBDeviceList",
	{Group: "loadbalancer.harvesterhci.io", Version: "v1beta1", Resource: "ippools"}:      "IPPoolList",
}

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	fc := &fakeCluster{t: t, kv: kvfake.NewSimpleClientset(), denied: map[string]bool{}}
	fc.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), fakeListKinds)
	// The fakes do not assign UIDs or creation times; the driver relies on them (owner references, delete
	// preconditions, the lifetime of an address allocation).
	stampUID := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if m, err := meta.Accessor(a.(k8stesting.CreateAction).GetObject()); err == nil && m.GetUID() == "" {
			m.SetUID(types.UID(fmt.Sprintf("uid-%d", fc.uids.Add(1))))
			if ts := m.GetCreationTimestamp(); ts.IsZero() {
				m.SetCreationTimestamp(metav1.Now())
			}
		}
		return false, nil, nil
	}
	fc.kv.PrependReactor("create", "*", stampUID)
	fc.dyn.PrependReactor("create", "*", stampUID)
	// The fakes ignore a delete's UID precondition; the API server refuses a delete of another object.
	for _, f := range []*k8stesting.Fake{&fc.kv.Fake, &fc.dyn.Fake} {
		tracker := fc.kv.Tracker()
		if f == &fc.dyn.Fake {
			tracker = fc.dyn.Tracker()
		}
		f.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			d := a.(k8stesting.DeleteAction)
			pre := d.GetDeleteOptions().Preconditions
			if pre == nil || pre.UID == nil {
				return false, nil, nil
			}
			obj, err := tracker.Get(d.GetResource(), d.GetNamespace(), d.GetName())
			if err != nil {
				return false, nil, nil
			}
			if m, err := meta.Accessor(obj); err == nil && m.GetUID() != *pre.UID {
				return true, nil, apierrors.NewConflict(d.GetResource().GroupResource(), d.GetName(),
					fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, m.GetUID()))
			}
			return false, nil, nil
		})
	}
	fc.dyn.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var review authorizationv1.SelfSubjectAccessReview
		u := a.(k8stesting.CreateAction).GetObject()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.(runtime.Unstructured).UnstructuredContent(), &review); err != nil {
			return true, nil, err
		}
		attrs := review.Spec.ResourceAttributes
		review.Status.Allowed = !fc.denied[attrs.Verb+" "+attrs.Resource]
		out, _ := kube.ToUnstructured(kube.AccessReviews, &review)
		return true, out, nil
	})
	fc.dyn.PrependReactor("create", "selfsubjectrulesreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var review authorizationv1.SelfSubjectRulesReview
		u := a.(k8stesting.CreateAction).GetObject()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.(runtime.Unstructured).UnstructuredContent(), &review); err != nil {
			return true, nil, err
		}
		review.Status = fc.rules()
		out, _ := kube.ToUnstructured(kube.RulesReviews, &review)
		return true, out, nil
	})
	installListThenWatch(fc.kv)
	fc.c = kube.New(fc.kv.KubevirtV1(), fc.dyn, "harvester.test:6443", renewCredential)
	fc.seed()
	return fc
}

// rules is what the rules reviews answer: everything, or, when some "verb resource" is denied, every verb on every
// resource the driver asks about but those.
func (fc *fakeCluster) rules() authorizationv1.SubjectRulesReviewStatus {
	if fc.rulesIncomplete {
		return authorizationv1.SubjectRulesReviewStatus{Incomplete: true, EvaluationError: "webhook authorizer does not support user rule resolution"}
	}
	if len(fc.denied) == 0 {
		return authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	var status authorizationv1.SubjectRulesReviewStatus
	seen := map[string]bool{}
	for _, a := range slices.Concat(createAccess, kube.WatchMachineAccess, removeAccess, cloudProviderAccess, tokenAccess, ippool.Access, hostDeviceAccess, quotaAccess) {
		if seen[a.Resource] {
			continue
		}
		seen[a.Resource] = true
		rule := authorizationv1.ResourceRule{APIGroups: []string{"*"}, Resources: []string{a.Resource}}
		for _, v := range verbs {
			if !fc.denied[v+" "+a.Resource] {
				rule.Verbs = append(rule.Verbs, v)
			}
		}
		status.ResourceRules = append(status.ResourceRules, rule)
	}
	return status
}

// seed creates a namespace, a ready cloud image with its storage class, a blank-disk storage class, a network.
func (fc *fakeCluster) seed() {
	ctx := context.Background()
	fc.ok(kube.Create(ctx, fc.c, kube.Namespaces, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}))
	fc.addImage("default", "ubuntu", readyImage)
	for _, class := range []string{"longhorn-ubuntu", "longhorn"} {
		fc.ok(kube.Create(ctx, fc.c, kube.StorageClasses, "", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "driver.longhorn.io"}))
	}
	fc.ok(kube.Create(ctx, fc.c, kube.Networks, "default", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "vlan1", Namespace: "default"}}))
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
	fc.ok(kube.Create(context.Background(), fc.c, kube.Images, ns, img))
}

// ok fails the test on a seeding error: fc.ok(client call).
func (fc *fakeCluster) ok(_ any, err error) {
	fc.t.Helper()
	if err != nil {
		fc.t.Fatal(err)
	}
}

// failOn makes the first matching request fail with err (verb, resource; subresource optional via resource
// "secrets" etc.). It returns a counter of the times it fired.
func (fc *fakeCluster) failOn(verb, resource string, err error) *atomic.Int32 {
	var fired atomic.Int32
	react := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fired.Load() > 0 {
			return false, nil, nil
		}
		fired.Add(1)
		return true, nil, err
	}
	fc.kv.PrependReactor(verb, resource, react)
	fc.dyn.PrependReactor(verb, resource, react)
	return &fired
}

// objects counts what exists: VMs, VMIs, Secrets.
func (fc *fakeCluster) objects() (vms, vmis, secrets int) {
	ctx := context.Background()
	vmList, err := fc.kv.KubevirtV1().VirtualMachines("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fc.t.Fatal(err)
	}
	vmiList, err := fc.kv.KubevirtV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fc.t.Fatal(err)
	}
	secretList, err := kube.List(ctx, fc.c, kube.Secrets, "", metav1.ListOptions{})
	if err != nil {
		fc.t.Fatal(err)
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
	ctx, cancel := context.WithCancel(context.Background())
	fc.t.Cleanup(cancel)
	w, err := fc.kv.KubevirtV1().VirtualMachines(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		fc.t.Fatal(err)
	}
	var mu sync.Mutex
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				vm, isVM := ev.Object.(*kubevirtv1.VirtualMachine)
				if !isVM || ev.Type == watch.Deleted {
					if isVM {
						_ = fc.kv.KubevirtV1().VirtualMachineInstances(vm.Namespace).Delete(ctx, vm.Name, metav1.DeleteOptions{})
					}
					continue
				}
				mu.Lock()
				fc.reconcile(ctx, vm, shape)
				mu.Unlock()
			}
		}
	}()
}

func (fc *fakeCluster) reconcile(ctx context.Context, vm *kubevirtv1.VirtualMachine, shape vmiShape) {
	vms, vmis := fc.kv.KubevirtV1().VirtualMachines(vm.Namespace), fc.kv.KubevirtV1().VirtualMachineInstances(vm.Namespace)
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
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace, Labels: vm.Spec.Template.ObjectMeta.Labels}}
		if shape == nil {
			shape = healthy("10.0.0.5")
		}
		status = shape(vm, vmi)
		if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fc.t.Errorf("kubeVirt: creating VMI: %v", err)
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
	d.clients = fc.c
	return d
}

// captureLog sends the driver's log (milestones and detail) to a buffer for the test's duration.
func captureLog(t *testing.T) *syncBuffer {
	t.Helper()
	buf := &syncBuffer{}
	captureLogs(t, buf, buf)
	return buf
}

// captureLogs sends the milestones (what the user sees) to info and the detail to debug.
func captureLogs(t *testing.T, info, debug *syncBuffer) {
	t.Helper()
	log.SetOutWriter(info)
	log.SetErrWriter(info)
	logging.SetDebugOutput(debug)
	t.Cleanup(func() {
		log.SetOutWriter(nopWriter{})
		log.SetErrWriter(nopWriter{})
		logging.SetDebugOutput(nopWriter{})
	})
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// eventually waits for cond, for assertions on what a background goroutine does.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
