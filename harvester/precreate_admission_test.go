package harvester

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// dryRuns are the dry-run creates the check sent, in order.
type dryRuns []k8stesting.CreateActionImpl

func (runs dryRuns) resources() []string {
	var out []string
	for _, a := range runs {
		out = append(out, a.GetResource().Resource)
	}
	return out
}

// checkAdmissionOf runs the check verb's checks for machine m1 configured by opts on fc and returns the
// admission check's lines (under the driver's own name) and the dry runs it sent.
func checkAdmissionOf(t *testing.T, fc *fakeCluster, opts config.Options) ([]string, dryRuns) {
	t.Helper()
	d := newTestDriver(t, fc, "m1", opts)
	fc.KV.ClearActions()
	fc.Dyn.ClearActions()
	checks := d.verbChecks(t)
	var runs dryRuns
	for _, a := range append(fc.Dyn.Actions(), fc.KV.Actions()...) { // the Secret's through the dynamic fake, the VM's through KubeVirt's
		if create, ok := a.(k8stesting.CreateActionImpl); ok && slices.Contains(create.GetCreateOptions().DryRun, metav1.DryRunAll) {
			runs = append(runs, create)
		}
	}
	last := checks[len(checks)-1]
	if last.Name != preflight.CheckAdmission {
		t.Fatalf("the last check is %q, want %q", last.Name, preflight.CheckAdmission)
	}
	return last.Lines(func(s string) string { return s }), runs
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("admission says\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const assumedKey = "assumed: a new SSH key, as a create makes one"

// The check verb sends the Secret, then the VM, exactly as a create builds them, as dry runs: nothing is stored.
// PreCreateCheck asks nothing of the kind.
func TestCheckAdmissionSendsTheCreatesObjectsAsDryRuns(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	lines, runs := checkAdmissionOf(t, fc, createOptions())
	wantLines(t, lines, "ok       admission             Secret default/m1-cloudinit and VM default/m1 accepted in a dry run, nothing written ("+assumedKey+")")
	if got := runs.resources(); !slices.Equal(got, []string{"secrets", "virtualmachines"}) {
		t.Fatalf("dry runs of %v, want the Secret, then the VM", got)
	}
	fc.nothingLeft(t)

	// The objects are a create's: its labels, the user data with the guest's key, the create's id, the Secret the
	// VM reads its cloud-init from.
	u := runs[0].GetObject().(runtime.Unstructured)
	secret := &corev1.Secret{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), secret); err != nil {
		t.Fatal(err)
	}
	vm := runs[1].GetObject().(*kubevirtv1.VirtualMachine)
	userData := string(secret.Data[objects.SecretKeyUserData])
	for _, want := range []string{"user-data-secret-marker", "ssh-rsa ", "qemu-guest-agent"} {
		if !strings.Contains(userData, want) {
			t.Errorf("the Secret's user data lacks %q", want)
		}
	}
	if secret.Annotations[config.AnnotationCreateID] == "" || vm.Annotations[config.AnnotationCreateID] != secret.Annotations[config.AnnotationCreateID] {
		t.Errorf("the create's id: Secret %q, VM %q", secret.Annotations[config.AnnotationCreateID], vm.Annotations[config.AnnotationCreateID])
	}
	if vm.Labels[config.LabelCreator] != config.CreatorName || secret.Labels[config.LabelCreator] != config.CreatorName {
		t.Errorf("creator labels: VM %v, Secret %v", vm.Labels, secret.Labels)
	}
	var cloudInit *kubevirtv1.CloudInitNoCloudSource
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.CloudInitNoCloud != nil {
			cloudInit = v.CloudInitNoCloud
		}
	}
	if cloudInit == nil || cloudInit.UserDataSecretRef == nil || cloudInit.UserDataSecretRef.Name != secret.Name {
		t.Errorf("the VM's cloud-init volume: %+v", cloudInit)
	}

	d := newTestDriver(t, fc, "m1", createOptions())
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckAdmission {
			t.Errorf("PreCreateCheck's pre-flight asks the cluster's admission")
		}
	}
}

// What the webhooks answer is worded with the webhook's name and message as the API server passes them on.
func TestCheckAdmissionWordsTheWebhooksAnswer(t *testing.T) {
	for _, tt := range []struct {
		name     string
		resource string
		err      error
		want     string
	}{
		// Harvester's validator answers a plain error as an internal error (harvester/harvester pkg/webhook/types
		// AdmissionHandler.Admit, werror.NewInternalError), the duplicate MAC address among them.
		{"harvester", "virtualmachines", kubefake.WebhookDenial("validator.harvesterhci.io", metav1.Status{Code: 500, Reason: metav1.StatusReasonInternalError,
			Message: "duplicate mac address present for vm m1 for cluster network mgmt"}),
			"problem  admission             VM default/m1: admission webhook validator.harvesterhci.io refuses it: duplicate mac address present for vm m1 for cluster network mgmt (dry run; " + assumedKey + ")"},
		// KubeVirt's admitter answers with causes and their messages joined (kubevirt pkg/virt-api/webhooks
		// ToAdmissionResponse).
		{"kubevirt", "virtualmachines", kubefake.WebhookDenial("virtualmachine-validator.kubevirt.io", metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: "spec.template.spec.domain.devices.disks[0].name 'disk-0' not found.",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueNotFound, Field: "spec.template.spec.domain.devices.disks[0].name"}}}}),
			"problem  admission             VM default/m1: admission webhook virtualmachine-validator.kubevirt.io refuses it: spec.template.spec.domain.devices.disks[0].name 'disk-0' not found. (dry run; " + assumedKey + ")"},
		{"no reason", "virtualmachines", kubefake.WebhookDenial("policy.example.com", metav1.Status{}),
			"problem  admission             VM default/m1: admission webhook policy.example.com refuses it without a reason (dry run; " + assumedKey + ")"},
		// The API server's own answers.
		{"a quota", "secrets", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "m1-cloudinit", errors.New("exceeded quota: q1, requested: count/secrets=1, used: count/secrets=2, limited: count/secrets=2")),
			`problem  admission             Secret default/m1-cloudinit: forbidden although the credential's role allows the create: an admission plugin or policy of Harvester refuses it (secrets "m1-cloudinit" is forbidden: exceeded quota: q1, requested: count/secrets=1, used: count/secrets=2, limited: count/secrets=2)`},
		{"invalid", "virtualmachines", apierrors.NewInvalid(schema.GroupKind{Group: "kubevirt.io", Kind: "VirtualMachine"}, "m1", nil),
			`problem  admission             VM default/m1: the API server refuses it as invalid: VirtualMachine.kubevirt.io "m1" is invalid (dry run; ` + assumedKey + `)`},
		{"a webhook that did not answer", "virtualmachines",
			apierrors.NewInternalError(errors.New(`failed calling webhook "validator.harvesterhci.io": context deadline exceeded`)),
			`problem  admission             cannot ask the cluster's admission about VM default/m1: an admission webhook of Harvester at harvester.test:6443 did not answer (Internal error occurred: failed calling webhook "validator.harvesterhci.io": context deadline exceeded); check the harvester-webhook pods in namespace harvester-system, then try again`},
		// A webhook that may not be called in a dry run (k8s.io/apiserver NewDryRunUnsupportedErr) leaves the VM
		// unjudged: not ok, and no problem of the machine.
		{"no dry runs", "virtualmachines", apierrors.NewBadRequest(`admission webhook "sideeffects.example.com" does not support dry run`),
			"skipped  admission             admission webhook sideeffects.example.com does not support dry runs (its sideEffects is neither None nor NoneOnDryRun): it cannot judge VM default/m1 without a real create"},
		// The Secret's content is never repeated, whatever a webhook or an admission policy says: the client's screen
		// withholds it, and the rest of the message is shown.
		{"a Secret's content", "secrets", kubefake.WebhookDenial("secrets.example.com", metav1.Status{Message: "bad line: write_files: [{path: /etc/marker, content: user-data-secret-marker}]"}),
			"problem  admission             Secret default/m1-cloudinit: admission webhook secrets.example.com refuses it: bad line: [withheld] (dry run; " + assumedKey + ")"},
		{"a Secret's content in a policy's message", "secrets", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "m1-cloudinit",
			errors.New("ValidatingAdmissionPolicy 'no-markers' denied request: write_files: [{path: /etc/marker, content: user-data-secret-marker}]")),
			`problem  admission             Secret default/m1-cloudinit: forbidden although the credential's role allows the create: an admission plugin or policy of Harvester refuses it (secrets "m1-cloudinit" is forbidden: ValidatingAdmissionPolicy 'no-markers' denied request: [withheld])`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			fc.FailOn("create", tt.resource, tt.err)
			lines, runs := checkAdmissionOf(t, fc, createOptions())
			wantLines(t, lines, tt.want)
			if got := runs.resources(); !slices.Equal(got, []string{"secrets", "virtualmachines"}) {
				t.Errorf("dry runs of %v, want the Secret, then the VM, whatever the Secret's answer", got)
			}
			fc.nothingLeft(t)
		})
	}
}

// Another party's message is bounded as a webhook's is: an invalid VM's, here of 2,000 bytes.
func TestCheckAdmissionBoundsTheServersMessage(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	endless := apierrors.NewInvalid(schema.GroupKind{Group: "kubevirt.io", Kind: "VirtualMachine"}, "m1",
		field.ErrorList{field.Invalid(field.NewPath("spec"), "x", strings.Repeat("too long, ", 200))})
	fc.FailOn("create", "virtualmachines", endless)
	lines, _ := checkAdmissionOf(t, fc, createOptions())
	const head = "problem  admission             VM default/m1: the API server refuses it as invalid: "
	if len(lines) != 1 || !strings.HasPrefix(lines[0], head+endless.Status().Message[:900]) || !strings.HasSuffix(lines[0], " … (dry run; "+assumedKey+")") ||
		len(lines[0]) > len(head)+1000+len(" … (dry run; "+assumedKey+")") {
		t.Errorf("admission says %q, want the server's message cut at 1,000 bytes", lines)
	}
}

// The names are a create's: a VM or Secret of the name makes the create fail after admission let it through.
func TestCheckAdmissionNameTaken(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.OK(fc.KV.KubevirtV1().VirtualMachines("default").Create(context.Background(), &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"}}, metav1.CreateOptions{}))
	lines, _ := checkAdmissionOf(t, fc, createOptions())
	wantLines(t, lines, "problem  admission             VM default/m1 already exists: the cluster's admission lets the create through, and the API server refuses it for its name; choose another machine name or remove that VM")
}

// A credential that may not create what a create creates: the review's answer spares the dry run; the dry run's
// own 403 when the review could not tell.
func TestCheckAdmissionPermissions(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.Denied["create virtualmachines"] = true
	lines, runs := checkAdmissionOf(t, fc, createOptions())
	wantLines(t, lines, "skipped  admission             the credential may not create virtualmachines in namespace default, which a create needs: VM default/m1 was not sent")
	if got := runs.resources(); !slices.Equal(got, []string{"secrets"}) {
		t.Errorf("dry runs of %v, want the Secret's alone", got)
	}

	// Neither may be created: that is the line's reason, before any other (here an image the check cannot use).
	fc = newFakeCluster(t)
	fc.Denied["create virtualmachines"], fc.Denied["create secrets"] = true, true
	lines, runs = checkAdmissionOf(t, fc, configtest.With(createOptions(), config.FlagImageName, "default/absent"))
	wantLines(t, lines, "skipped  admission             the credential may not create secrets and virtualmachines in namespace default, which a create needs: neither the Secret nor the VM was sent")
	if len(runs) > 0 {
		t.Errorf("dry runs of %v", runs.resources())
	}

	fc = newFakeCluster(t)
	fc.FailOn("create", "selfsubjectrulesreviews", apierrors.NewServiceUnavailable("authorization is down"))
	fc.FailOn("create", "secrets", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New(`User "u" cannot create resource "secrets" in API group "" in the namespace "default"`)))
	lines, _ = checkAdmissionOf(t, fc, createOptions())
	// (The quoted "secrets" is hidden from the message: config.Redact errs on the side of hiding.)
	if want := `problem  admission             the credential may not create secrets in namespace default, which a create needs (403 Forbidden: secrets is forbidden: User "u" cannot create resource `; len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("admission says %q, want one line starting %q", lines, want)
	}
}

// Objects a create could not build are not sent: an image it cannot use, a pool without an address, a namespace
// that does not exist.
func TestCheckAdmissionSkipsWhatCannotBeBuilt(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(fc *fakeCluster)
		opts  config.Options
		want  string
	}{
		{"an image", func(*fakeCluster) {}, configtest.With(createOptions(), config.FlagImageName, "default/absent"),
			"skipped  admission             the VM cannot be built as a create builds it: an image or a key pair could not be used"},
		{"an address", func(fc *fakeCluster) { holdAddress(t, fc, poolCreateOptions("10.0.0.10-10.0.0.10/24"), "10.0.0.10") },
			poolCreateOptions("10.0.0.10-10.0.0.10/24"),
			"skipped  admission             the VM cannot be built as a create builds it: the IP pool check found no address for it"},
		{"a namespace", func(*fakeCluster) {},
			configtest.With(createOptions(), config.FlagVMNamespace, "team-x", config.FlagImageName, "default/ubuntu", config.FlagNetworkName, "default/vlan1"),
			"skipped  admission             namespace team-x does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			tt.setup(fc)
			lines, runs := checkAdmissionOf(t, fc, tt.opts)
			wantLines(t, lines, tt.want)
			if len(runs) > 0 {
				t.Errorf("dry runs of %v for objects a create could not build", runs.resources())
			}
		})
	}
}

// With a pool, the objects carry the address a create would take now (the first free one, here after one
// another machine holds) and its MAC address; the line says it was assumed.
func TestCheckAdmissionWithAPoolsAddress(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	opts := poolCreateOptions("10.0.0.10-10.0.0.12/24")
	holdAddress(t, fc, opts, "10.0.0.10")

	lines, runs := checkAdmissionOf(t, fc, opts)
	wantLines(t, lines, "ok       admission             Secret default/m1-cloudinit and VM default/m1 accepted in a dry run, nothing written ("+
		assumedKey+"; address 10.0.0.11, the pool's first free)")
	if len(runs) != 2 {
		t.Fatalf("dry runs of %v", runs.resources())
	}
	vm := runs[1].GetObject().(*kubevirtv1.VirtualMachine)
	want := objects.StaticMAC(config.Ref{Namespace: "default", Name: "vlan1"}, netip.MustParseAddr("10.0.0.11"))
	if mac := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].MacAddress; mac != want {
		t.Errorf("the VM's MAC address is %q, want %q (10.0.0.11's)", mac, want)
	}
	if got := vm.Annotations[config.AnnotationIPAllocation]; got != "default/ip-vlan1-10-0-0-11" {
		t.Errorf("the VM names allocation %q", got)
	}
	if cms := fc.ConfigMaps("default"); len(cms) != 1 {
		t.Errorf("the check allocated: %d ConfigMaps", len(cms))
	}
}

// holdAddress allocates addr of opts's pool to another machine's create, in flight for an hour.
func holdAddress(t *testing.T, fc *fakeCluster, opts config.Options, addr string) {
	t.Helper()
	cfg, err := config.ParseConfig("other", opts)
	if err != nil {
		t.Fatal(err)
	}
	plan := objects.PlanAddresses(cfg)
	fc.OK(kube.Create(context.Background(), fc.C, kube.ConfigMaps, "default", plan.Allocation(plan.Static(netip.MustParseAddr(addr), nil), time.Hour, "other-create")))
}

// The dry runs need what the creates they stand for need, which the permission table shows (its "always" row is
// createAccess).
func TestCheckAdmissionNeedsTheCreatesAccess(t *testing.T) {
	for _, a := range []kube.Access{preflight.CreateSecretAccess, preflight.CreateVMAccess} {
		if !slices.Contains(createAccess, a) {
			t.Errorf("createAccess lacks %s (%s), which the admission's dry run needs", a, a.Group)
		}
	}
}

// With user data and network data kept in a Secret, the dry-run Secret holds them merged as the create merges them
// (the machine the pre-flight completes, which the create sends); when that Secret cannot be used, nothing is sent.
func TestCheckAdmissionSendsTheDataSecretsContent(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.userSecret("ud", map[string]string{"userdata": secretUser, "networkdata": secretNetwork}, nil)
	lines, runs := checkAdmissionOf(t, fc, dataSecretOptions())
	wantLines(t, lines, "ok       admission             Secret default/m1-cloudinit and VM default/m1 accepted in a dry run, nothing written ("+assumedKey+")")
	if len(runs) != 2 {
		t.Fatalf("%d dry runs, want the Secret's and the VM's", len(runs))
	}
	secret := &corev1.Secret{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(runs[0].GetObject().(runtime.Unstructured).UnstructuredContent(), secret); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{secretToken, "echo from-the-secret", "qemu-guest-agent"} {
		if !strings.Contains(string(secret.Data[objects.SecretKeyUserData]), want) {
			t.Errorf("the dry-run Secret's user data lacks %q", want)
		}
	}
	if got := string(secret.Data[objects.SecretKeyNetworkData]); got != secretNetwork {
		t.Errorf("the dry-run Secret's network data is %q, want the Secret's", got)
	}

	fc = newFakeCluster(t)
	kubefake.CaptureLog(t)
	lines, runs = checkAdmissionOf(t, fc, dataSecretOptions()) // Secret ud does not exist
	wantLines(t, lines, "skipped  admission             the VM cannot be built as a create builds it: the user data or network data kept in a Secret could not be used")
	if len(runs) != 0 {
		t.Errorf("%d dry runs sent without the data Secret's content", len(runs))
	}
}
