package harvester

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Public keys of people's key pairs; the driver passes them on without parsing them.
const (
	aliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAliceAliceAliceAliceAliceAliceAliceAlice alice@laptop"
	bobKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobBobBobBobBobBobBobBobBobBobBobBobBobBo bob@desk"
)

// addKeyPair seeds a KeyPair as Harvester's controller leaves it: validated, or not (a key it could not parse).
func (fc *fakeCluster) addKeyPair(ns, name, publicKey string, validated bool) {
	kp := &kube.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	kp.Spec.PublicKey = publicKey
	status := corev1.ConditionFalse
	if validated {
		status = corev1.ConditionTrue
	}
	kp.Status.Conditions = []kube.Condition{{Type: kube.ConditionValidated, Status: status}}
	fc.OK(kube.Create(context.Background(), fc.C, kube.KeyPairs, ns, kp))
}

// The people's key pairs go into the guest's authorized keys beside the driver's own key, each once, and are
// listed in the VM's harvesterhci.io/sshNames; no private key is asked for.
func TestCreateInstallsPeoplesKeyPairs(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	fc.addKeyPair("default", "alice", aliceKey, true)
	fc.addKeyPair("ops", "bob", bobKey+"\n", true)
	fc.addKeyPair("default", "alice-again", strings.Replace(aliceKey, "alice@laptop", "alice@phone", 1), true)
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagSSHKeyPairs, "alice, ops/bob, default/alice, alice-again"))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	ctx := context.Background()
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	userData := string(secret.Data[objects.SecretKeyUserData])
	own, err := os.ReadFile(d.GetSSHKeyPath() + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{strings.TrimSpace(string(own)), aliceKey, bobKey} {
		if n := strings.Count(userData, key); n != 1 {
			t.Errorf("the user data holds %q %d times, want once:\n%s", key, n, userData)
		}
	}
	if strings.Contains(userData, "alice@phone") {
		t.Errorf("the same key under another comment is installed twice:\n%s", userData)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal([]byte(vm.Spec.Template.ObjectMeta.Annotations[config.AnnotationSSHNames]), &names); err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, " ") != "default/alice ops/bob default/alice-again" {
		t.Errorf("sshNames %v, want the three key pairs named", names)
	}
}

// Each key pair that cannot be installed is reported under --harvester-ssh-keypairs by name, with the others'
// problems, before anything is made.
func TestPreCreateCheckRefusesPeoplesKeyPairs(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addKeyPair("default", "alice", aliceKey, true)
	fc.addKeyPair("default", "unparsed", "not a key", false)
	fc.addKeyPair("default", "empty", "", true)
	fc.addKeyPair("default", "two-lines", aliceKey+"\n"+bobKey, true)
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagSSHKeyPairs, "alice,unparsed,empty,two-lines,ops/absent"))
	err := d.PreCreateCheck()
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	for _, want := range []string{
		"--harvester-ssh-keypairs: key pair default/unparsed is not validated by Harvester (no valid public key); fix or recreate it in Harvester",
		"--harvester-ssh-keypairs: key pair default/empty is not validated by Harvester",
		"--harvester-ssh-keypairs: key pair default/two-lines holds more than one line",
		"--harvester-ssh-keypairs: key pair ops/absent does not exist",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("PreCreateCheck does not report %q; it said:\n%v", want, err)
		}
	}
	if len(cerr.Problems) != 4 {
		t.Errorf("%d problems, want 4 (alice is fine):\n%v", len(cerr.Problems), err)
	}
	if _, _, secrets := fc.objects(); secrets != 0 {
		t.Errorf("PreCreateCheck made %d Secrets", secrets)
	}
}

// API failures are reported as what they are: a credential that may not read KeyPairs is told so, and a failing
// server is not mistaken for a missing key pair.
func TestPreCreateCheckKeyPairAPIFailures(t *testing.T) {
	keypairs := schema.GroupResource{Group: "harvesterhci.io", Resource: "keypairs"}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", apierrors.NewForbidden(keypairs, "alice", errors.New(`User "deployer" cannot get resource "keypairs"`)),
			`--harvester-ssh-keypairs: the credential may not read key pair default/alice (403 Forbidden: keypairs.harvesterhci.io "alice" is forbidden: User "deployer" cannot get resource "keypairs"), so its public key cannot be installed; ask for a Harvester role that may get keypairs (harvesterhci.io) in namespace default`},
		{"server error", apierrors.NewInternalError(errors.New("etcd timeout")),
			"--harvester-ssh-keypairs: cannot read key pair default/alice: Internal error occurred: etcd timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			fc.addKeyPair("default", "alice", aliceKey, true)
			fired := fc.FailOn("get", "keypairs", tt.err)
			err := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagSSHKeyPairs, "alice")).PreCreateCheck()
			if err == nil || !strings.Contains(err.Error(), tt.want) || fired.Load() != 1 {
				t.Fatalf("PreCreateCheck: %v\nwant %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "does not exist") {
				t.Errorf("an API failure reads as absence: %v", err)
			}
		})
	}
}
