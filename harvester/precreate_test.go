package harvester

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

func TestPreCreateCheckCreatesNothing(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	fc.KV.ClearActions()
	fc.Dyn.ClearActions()
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	for _, a := range append(fc.KV.Actions(), fc.Dyn.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
		case "create":
			if !strings.HasPrefix(a.GetResource().Resource, "selfsubject") {
				t.Errorf("PreCreateCheck wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
			}
		default:
			t.Errorf("PreCreateCheck wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestPreCreateCheckReportsEveryProblem(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addImage("default", "installer", readyImage, func(img *kube.VirtualMachineImage) { img.Labels[kube.LabelImageType] = "iso" })
	fc.addImage("default", "legacy-iso", readyImage, func(img *kube.VirtualMachineImage) {
		delete(img.Labels, kube.LabelImageType)
		img.Spec.DisplayName = "SLES-15-SP6.ISO"
	})
	fc.addImage("default", "importing", func(img *kube.VirtualMachineImage) { img.Status.Progress = 42 })
	fc.addImage("default", "broken", readyImage, func(img *kube.VirtualMachineImage) {
		img.Status.Conditions = append(img.Status.Conditions, kube.Condition{Type: kube.ConditionRetryLimitExceeded, Status: corev1.ConditionTrue, Message: "404 from the download URL"})
	})
	ctx := context.Background()
	fc.OK(kube.Create(ctx, fc.C, kube.KeyPairs, "default", &kube.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: "unchecked", Namespace: "default"}}))
	fc.OK(fc.KV.KubevirtV1().VirtualMachines("default").Create(ctx, &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"}}, metav1.CreateOptions{}))
	fc.Denied["delete virtualmachines"] = true

	opts := configtest.With(config.DefaultOptions(),
		config.FlagDiskInfo, `{"disks":[{"imageName":"installer","size":10},{"imageName":"legacy-iso","size":10},{"imageName":"importing","size":10},
			{"imageName":"broken","size":10},{"imageName":"absent","size":10},{"storageClassName":"fast-nvme","size":10}]}`,
		config.FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1"},{"networkName":"vlan-missing"}]}`,
		config.FlagKeyPairName, "unchecked", config.FlagSSHPrivateKeyPath, configtest.WriteKey(t, false))
	d := newTestDriver(t, fc, "m1", opts)
	err := d.PreCreateCheck()
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want every problem in one ConfigError, got %v", err)
	}
	for _, want := range []string{
		`--harvester-disk-info: image default/installer ("installer.qcow2") is an ISO image`,
		`image default/legacy-iso ("SLES-15-SP6.ISO") is an ISO image`,
		"image default/importing is not ready: it is still being imported (progress 42%)",
		"image default/broken failed to import (404 from the download URL)",
		"image default/absent does not exist",
		"disk-5: storage class fast-nvme does not exist in Harvester",
		"--harvester-network-info: nic-1: network default/vlan-missing does not exist",
		"--harvester-key-pair-name: key pair default/unchecked is not validated by Harvester",
		"a VirtualMachine named m1 already exists in namespace default (created by someone else)",
		"--harvester-kubeconfig-content: the credential may not delete virtualmachines in namespace default",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("PreCreateCheck does not report %q; it said:\n%v", want, err)
		}
	}
	if !strings.HasPrefix(err.Error(), "cannot create the machine on Harvester (10 problems)") {
		t.Errorf("title: %v", err)
	}
}

// PreCreateCheck's answer for a credential that may not do what the machine needs, one Harvester rejects, and a
// namespace that does not exist.
func TestPreCreateCheckRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(fc *fakeCluster)
		opts  config.Options
		want  []string
	}{
		// The readiness wait lists and watches the VM and its VMI: a credential that may not is refused before
		// anything is made, in the order the needs are declared.
		{"what the wait needs", func(fc *fakeCluster) {
			fc.Denied["watch virtualmachines"] = true
			fc.Denied["list virtualmachineinstances"] = true
		}, createOptions(),
			[]string{"--harvester-kubeconfig-content: the credential may not watch virtualmachines and list virtualmachineinstances in namespace default"}},
		{"a bad credential", func(fc *fakeCluster) { fc.FailOn("get", "namespaces", apierrors.NewUnauthorized("token expired")) }, createOptions(),
			[]string{"rejected the credential (401 Unauthorized)", "update the Harvester cloud credential"}},
		{"a missing namespace", func(*fakeCluster) {},
			configtest.With(createOptions(), config.FlagVMNamespace, "team-x", config.FlagImageName, "default/ubuntu", config.FlagNetworkName, "default/vlan1"),
			[]string{"--harvester-vm-namespace: namespace team-x does not exist in Harvester"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			tt.setup(fc)
			err := newTestDriver(t, fc, "m1", tt.opts).PreCreateCheck()
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("PreCreateCheck: %v; want %q", err, want)
				}
			}
		})
	}
}

func TestPreCreateCheckTellsAPIFailuresFromAbsence(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.FailOn("get", "virtualmachineimages", apierrors.NewForbidden(schema.GroupResource{Group: "harvesterhci.io", Resource: "virtualmachineimages"}, "ubuntu", errors.New("no access")))
	d := newTestDriver(t, fc, "m1", createOptions())
	err := d.PreCreateCheck()
	if err == nil || !strings.Contains(err.Error(), "cannot read image default/ubuntu: the credential is not allowed to") || strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a 403 must be reported as a 403, not as absence: %v", err)
	}
}

func TestPreCreateCheckZones(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	ctx := context.Background()
	for name, labels := range map[string]map[string]string{
		"host1": {corev1.LabelTopologyZone: "zone-a", corev1.LabelTopologyRegion: "us-east"},
		"host2": {corev1.LabelTopologyZone: "zone-b", corev1.LabelTopologyRegion: "us-east"},
		"host3": {},
	} {
		fc.OK(kube.Create(ctx, fc.C, kube.Nodes, "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
	}
	tests := []struct {
		zones, regions, want string
	}{
		{"zone-a", "", ""},
		{"zone-c,zone-b", "us-east", ""},
		{"zone-c", "", "--harvester-zone: no Harvester host is in zone-c (hosts carry: (none), zone-a and zone-b)"},
		{"", "eu-west", "--harvester-region: no Harvester host is in eu-west (hosts carry: (none) and us-east)"},
		{"zone-a", "eu-west", "no Harvester host is in zone-a within region eu-west"},
	}
	for _, tt := range tests {
		d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagZone, tt.zones, config.FlagRegion, tt.regions))
		err := d.PreCreateCheck()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("zones %q regions %q: %v, want %q", tt.zones, tt.regions, err, tt.want)
		}
	}
}

// The pre-flight asks its permissions with one SelfSubjectRulesReview, and falls back to SelfSubjectAccessReviews
// when the server cannot list the rules (incomplete); either way a denied permission is reported.
func TestPreCreateCheckAsksPermissionsOnce(t *testing.T) {
	for _, incomplete := range []bool{false, true} {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		fc.RulesIncomplete = incomplete
		fc.Denied["delete virtualmachines"] = true
		d := newTestDriver(t, fc, "m1", createOptions())
		fc.Dyn.ClearActions()
		err := d.PreCreateCheck()
		if err == nil || !strings.Contains(err.Error(), "the credential may not delete virtualmachines in namespace default") {
			t.Errorf("incomplete %v: want the denied delete, got %v", incomplete, err)
		}
		reviews := map[string]int{}
		for _, a := range fc.Dyn.Actions() {
			if a.GetVerb() == "create" {
				reviews[a.GetResource().Resource]++
			}
		}
		wantAccess := 0
		if incomplete {
			wantAccess = len(d.neededAccess())
		}
		if reviews["selfsubjectrulesreviews"] != 1 || reviews["selfsubjectaccessreviews"] != wantAccess {
			t.Errorf("incomplete %v: want 1 rules review and %d access reviews, got %v", incomplete, wantAccess, reviews)
		}
	}
}

// A read the credential may not make blocks nothing (PreCreateCheck passes), but the check it belongs to is not
// "ok": it says what it could not tell, and why, in Skipped — also beside a problem another part of it found.
func TestPreflightSaysWhatItCouldNotRead(t *testing.T) {
	forbidden := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("RBAC: not allowed"))
	}
	deny := func(fc *fakeCluster) {
		fc.FailOn("get", "namespaces", forbidden("namespaces"))
		fc.FailOn("list", "storageclasses", forbidden("storageclasses")) // then each is read by name
		fc.FailOn("get", "storageclasses", forbidden("storageclasses"))
		fc.FailOn("get", "network-attachment-definitions", forbidden("network-attachment-definitions"))
		fc.FailOn("list", "nodes", forbidden("nodes"))
	}
	opts := configtest.With(createOptions(), config.FlagZone, "zone-a")

	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	deny(fc)
	if err := newTestDriver(t, fc, "m1", opts).PreCreateCheck(); err != nil {
		t.Fatalf("PreCreateCheck is blocked by reads it may not make: %v", err)
	}

	fc = newFakeCluster(t)
	deny(fc)
	d := newTestDriver(t, fc, "m1", opts)
	got := map[string]preflight.Check{}
	for _, c := range d.preflight(context.Background(), nil).Checks {
		got[c.Name] = c
	}
	for name, want := range map[string]string{
		preflight.CheckNamespace:      "the credential may not get namespaces: cannot tell whether namespace default exists",
		preflight.CheckStorageClasses: "the credential may not get storageclasses: cannot tell whether storage class longhorn-ubuntu exists",
		preflight.CheckNetworks:       "the credential may not get network-attachment-definitions in namespace default: cannot tell whether network default/vlan1 exists",
		preflight.CheckZones:          "the credential may not list nodes: cannot tell whether a Harvester host is in zone-a",
	} {
		if c := got[name]; c.Skipped != want || len(c.Problems) != 0 {
			t.Errorf("%s: skipped %q, problems %v; want skipped %q", name, c.Skipped, c.Problems, want)
		}
	}
	for _, name := range []string{preflight.CheckCredential, preflight.CheckPermissions, preflight.CheckMachineName, preflight.CheckImagesKeyPairs} {
		if c := got[name]; c.Skipped != "" || len(c.Problems) != 0 {
			t.Errorf("%s: %+v, want ok", name, c)
		}
	}

	// Two networks: one missing (a problem), one the credential may not read (skipped), in one check.
	fc = newFakeCluster(t)
	fc.FailOn("get", "network-attachment-definitions", forbidden("network-attachment-definitions"))
	d = newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagNetworkInfo, `{"interfaces":[{"networkName":"vlan1"},{"networkName":"vlan-missing"}]}`))
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckNetworks && (len(c.Problems) != 1 || !strings.Contains(c.Skipped, "network default/vlan1 exists")) {
			t.Errorf("networks: %+v, want a problem and a skipped part", c)
		}
	}
}

// The pre-flight's checks run at once: the VM is still being read (the machine name's check) when the image is
// asked for. One after the other, the image's read would wait for the VM's and this test would time out. (The two
// reads go through different fakes: each fake clientset runs one request at a time.)
func TestPreflightReadsAtOnce(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	imageAsked := make(chan struct{})
	var once sync.Once
	fc.Dyn.PrependReactor("get", "virtualmachineimages", func(k8stesting.Action) (bool, runtime.Object, error) {
		once.Do(func() { close(imageAsked) })
		return false, nil, nil
	})
	overlapped := false
	fc.KV.PrependReactor("get", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case <-imageAsked:
			overlapped = true
		case <-time.After(5 * time.Second):
		}
		return false, nil, nil
	})
	if err := newTestDriver(t, fc, "m1", createOptions()).PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if !overlapped {
		t.Errorf("the image was not asked for while the VM was being read: the checks ran one after the other")
	}
}

// The storage classes are listed once, beside the other reads; a credential that may not list them has each read
// by name after the images named theirs.
func TestPreflightListsStorageClasses(t *testing.T) {
	for _, mayList := range []bool{true, false} {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		if !mayList {
			fc.FailOn("list", "storageclasses", apierrors.NewForbidden(schema.GroupResource{Resource: "storageclasses"}, "", errors.New("no")))
		}
		d := newTestDriver(t, fc, "m1", createOptions())
		fc.Dyn.ClearActions()
		if err := d.PreCreateCheck(); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, a := range fc.Dyn.Actions() {
			if a.GetResource().Resource == "storageclasses" {
				n[a.GetVerb()]++
			}
		}
		if want := map[bool]int{true: 0, false: 1}[mayList]; n["list"] != 1 || n["get"] != want {
			t.Errorf("may list %v: %v requests on storage classes, want a list and %d gets", mayList, n, want)
		}
	}
}
