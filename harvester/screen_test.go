package harvester

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// wantWithheld fails t when text shows secret, or lacks the mark of a withheld run, or lacks kept (the words
// around the secret, which are no secret). The run withheld may take a space or a quote next to the secret with it,
// when the secret holds that too.
func wantWithheld(t *testing.T, text, secret string, kept ...string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("the message shows the secret %q:\n%s", secret, text)
	}
	configtest.WantAll(t, text, append(kept, kube.Withheld)...)
}

// The case: one value of the user data kept in a Secret, shorter than a line, quoted by a webhook that
// refuses the dry run of the cloud-init Secret, is withheld; the rest of the webhook's words are shown.
func TestCheckAdmissionWithholdsOneValueOfTheDataSecret(t *testing.T) {
	const key = "Hx7-pQ2-zW9-kL4-mN8"
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.userSecret("ud", map[string]string{"userdata": "#cloud-config\nwrite_files: [{path: /etc/deploy, content: deploy-key=" + key + "}]\n"}, nil)
	fc.FailOn("create", "secrets", kubefake.WebhookDenial("secrets.example.com", metav1.Status{Message: "value " + key + " looks like a key"}))
	lines, _ := checkAdmissionOf(t, fc, dataSecretOptions(config.FlagNetworkDataSecret, ""))
	text := strings.Join(lines, "\n")
	wantWithheld(t, text, key, "Secret default/m1-cloudinit: admission webhook secrets.example.com refuses it: value [withheld] looks like a key")
}

// A refusal of the VM that repeats a line of the cloud-init (inline user data) is withheld too: the VM carries no
// user data, but a webhook may read the Secret it names.
func TestCheckAdmissionWithholdsACloudInitLineInTheVMsRefusal(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.FailOn("create", "virtualmachines", kubefake.WebhookDenial("vm-policy.example.com",
		metav1.Status{Message: "cloud-init line write_files: [{path: /etc/marker, content: user-data-secret-marker}] is not allowed"}))
	lines, _ := checkAdmissionOf(t, fc, createOptions())
	wantWithheld(t, strings.Join(lines, "\n"), "user-data-secret-marker", "VM default/m1: admission webhook vm-policy.example.com refuses it: cloud-init line [withheld] is not allowed")
}

// The Status of a failed create, and a condition the readiness wait reports (the cluster's events of the VM, as
// KubeVirt writes them on the VMI), are screened: neither shows the SSH password or Rancher's install-script token.
func TestCreateFailuresWithholdSecrets(t *testing.T) {
	const token = "K10rancherJoinTokenQ9xw2Lr7"
	opts := configtest.With(createOptions(), config.FlagUserData, "#!/bin/sh\ncurl -H 'Authorization: Bearer "+token+"' https://rancher.example.com/system-agent-install.sh | sh\n")
	t.Run("Status of the VM's create", func(t *testing.T) {
		fc := newFakeCluster(t)
		fc.kubeVirt(healthy("10.0.0.5"))
		kubefake.CaptureLog(t)
		fc.FailOn("create", "virtualmachines", apierrors.NewInternalError(errors.New("webhook saw Bearer "+token+" in the cloud-init")))
		err := newTestDriver(t, fc, "m1", opts).Create()
		wantWithheld(t, errString(err), token, "cannot create VirtualMachine default/m1: Internal error occurred: webhook saw", "[withheld] in the cloud-init")
		fc.nothingLeft(t)
	})
	t.Run("a condition of the VMI", func(t *testing.T) {
		fc, _, err := createOn(t, func(_ *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachinePrintableStatus {
			vmi.Status.Phase = kubevirtv1.Scheduling
			vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: "PodScheduled", Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/3 nodes are available: guest said password-secret-marker."}}
			return kubevirtv1.VirtualMachineStatusUnschedulable
		}, 600)
		wantWithheld(t, errString(err), "password-secret-marker", "no Harvester host can run the VM", "guest said")
		fc.nothingLeft(t)
	})
}

// The driver's own words are never screened, though a secret holds them: only the cluster's text is. Here the
// user data holds the words of the driver's 403 message; the message keeps them and withholds only what the
// server quoted of the user data.
func TestTheDriversOwnWordsAreNotScreened(t *testing.T) {
	const words = "the credential is not allowed to"
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	opts := configtest.With(createOptions(), config.FlagUserData, "#cloud-config\n# "+words+"\n")
	fc.FailOn("create", "secrets", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "m1-cloudinit", errors.New("policy quoted "+words)))
	err := newTestDriver(t, fc, "m1", opts).Create()
	wantWithheld(t, errString(err), "quoted "+words, "cannot create cloud-init Secret default/m1-cloudinit: "+words+` (403 Forbidden: secrets "m1-cloudinit" is forbidden: policy quoted[withheld]).`)
}

// Every kind of secret the driver holds is withheld from a message of the cluster that repeats it: the user data
// (inline, and Rancher's install script), a data Secret's content, the SSH password, the guest kubeconfig's token
// given by flag, the generated account's token; the credential's are connection's (TestConnectHoldsTheCredential).
func TestEverySecretKindIsWithheld(t *testing.T) {
	guest := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "guest-kubeconfig-token-Q9x", 1)
	for _, tc := range []struct {
		name, secret string
		opts         []any
		setup        func(fc *fakeCluster)
	}{
		{name: "inline user data", secret: "user-data-secret-marker"},
		{name: "SSH password", secret: "password-secret-marker"},
		{name: "data Secret", secret: "PLANTEDregistryTokenQ9xw2Lr7Vb4Nc1Zt6Hy3", opts: []any{config.FlagUserData, "", config.FlagUserDataSecret, "ud"},
			setup: func(fc *fakeCluster) { fc.userSecret("ud", map[string]string{"userdata": secretUser}, nil) }},
		{name: "guest kubeconfig", secret: "guest-kubeconfig-token-Q9x", opts: []any{config.FlagCloudProviderConfig, guest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			if tc.setup != nil {
				tc.setup(fc)
			}
			fc.FailOn("create", "virtualmachines", apierrors.NewBadRequest("the request repeats "+tc.secret))
			lines, _ := checkAdmissionOf(t, fc, configtest.With(createOptions(), tc.opts...))
			wantWithheld(t, strings.Join(lines, "\n"), tc.secret, "cannot ask the cluster's admission about VM default/m1: the request repeats")
		})
	}
}
