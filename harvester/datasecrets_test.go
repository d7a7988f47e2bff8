package harvester

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// What the user's Secret holds in these tests: a registry token in the user data, a network-config.
const (
	secretToken   = "PLANTEDregistryTokenQ9xw2Lr7Vb4Nc1Zt6Hy3"
	secretUser    = "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/registries.yaml\n  content: 'token: " + secretToken + "'\nruncmd: [echo from-the-secret]\n"
	secretNetwork = "version: 2\nethernets:\n  eth0: {dhcp4: true, mtu: 1450}\n"
)

// dataSecretOptions are a create's flags with the user data and network data of Secret ud.
func dataSecretOptions(kv ...any) config.Options {
	o := configtest.With(configtest.MinimalOptions(),
		config.FlagKubeconfigContent, configtest.Kubeconfig,
		config.FlagUserDataSecret, "ud", config.FlagNetworkDataSecret, "ud",
		config.FlagCreateTimeout, "30")
	return configtest.With(o, kv...)
}

// userSecret makes the user's Secret name in namespace default, holding data.
func (fc *fakeCluster) userSecret(name string, data map[string]string, labels map[string]string) *corev1.Secret {
	fc.T.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	made, err := kube.Create(context.Background(), fc.C, kube.Secrets, "default", s)
	if err != nil {
		fc.T.Fatal(err)
	}
	return made
}

// unchanged fails t when Secret was changed since it was made: UID, resourceVersion, labels, annotations, owners,
// data.
func (fc *fakeCluster) unchanged(t *testing.T, when string, made *corev1.Secret) {
	t.Helper()
	now, err := kube.Get(context.Background(), fc.C, kube.Secrets, made.Namespace, made.Name)
	if err != nil {
		t.Fatalf("after %s, the user's Secret %s: %v", when, made.Name, err)
	}
	if now.UID != made.UID || now.ResourceVersion != made.ResourceVersion || !reflect.DeepEqual(now.Labels, made.Labels) ||
		!reflect.DeepEqual(now.Annotations, made.Annotations) || len(now.OwnerReferences) > 0 || !reflect.DeepEqual(now.Data, made.Data) {
		t.Errorf("after %s, the user's Secret changed:\n%+v\nwas\n%+v", when, now.ObjectMeta, made.ObjectMeta)
	}
}

// secretGets counts the reads of Secret name.
func (fc *fakeCluster) secretGets(name string) int {
	n := 0
	for _, a := range fc.Dyn.Actions() {
		if g, ok := a.(k8stesting.GetAction); ok && a.GetResource().Resource == "secrets" && g.GetName() == name {
			n++
		}
	}
	return n
}

// A create with user data and network data in a Secret: the pre-flight reads the Secret once, for both flags, and
// the create uses that read; the driver's cloud-init Secret holds the user data merged as inline user data is
// (the guest agent, the driver's key, the hostname) and the network data as it is; the saved state and the log,
// Debug included, hold none of it; the user's Secret is left as it was, by the create and by the remove.
func TestCreateWithDataSecrets(t *testing.T) {
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", configtest.Kubeconfig)
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	logs := kubefake.CaptureLog(t)
	made := fc.userSecret("ud", map[string]string{"userdata": secretUser, "networkdata": secretNetwork}, nil)
	d := newTestDriver(t, fc, "m1", dataSecretOptions())
	checks := d.preflight(context.Background(), nil).Checks
	for _, c := range checks {
		size := func(s string) string { return (&config.SecretValue{Data: []byte(s)}).Size() }
		want := "user data from Secret default/ud, key userdata (" + size(secretUser) + "); network data from Secret default/ud, key networkdata (" + size(secretNetwork) + ")"
		if c.Name == preflight.CheckDataSecrets && (len(c.Problems) > 0 || c.Detail != want) {
			t.Errorf("the data Secrets' check: %+v", c)
		}
	}
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if n := fc.secretGets("ud"); n != 2 {
		t.Errorf("the Secret was read %d times by two pre-flights and a create; want once each pre-flight, the create using the last", n)
	}
	ctx := context.Background()
	own, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	user := string(own.Data[objects.SecretKeyUserData])
	for _, want := range []string{"#cloud-config\n", "hostname: m1", "qemu-guest-agent", "/etc/rancher/rke2/registries.yaml", secretToken, "echo from-the-secret", "ssh-rsa "} {
		if !strings.Contains(user, want) {
			t.Errorf("the cloud-init Secret's user data lacks %q:\n%s", want, user)
		}
	}
	if got := string(own.Data[objects.SecretKeyNetworkData]); got != secretNetwork {
		t.Errorf("the cloud-init Secret's network data:\n%s\nwant the Secret's:\n%s", got, secretNetwork)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if nc := v.CloudInitNoCloud; nc != nil && (nc.UserDataSecretRef == nil || nc.UserDataSecretRef.Name != "m1-cloudinit" ||
			nc.NetworkDataSecretRef == nil || nc.NetworkDataSecretRef.Name != "m1-cloudinit") {
			t.Errorf("the VM's cloud-init volume does not point at the driver's Secret only: %+v", nc)
		}
	}
	fc.unchanged(t, "create", made)

	raw, _ := json.Marshal(d) // what rancher-machine saves
	for _, secret := range []string{secretToken, "from-the-secret", "mtu: 1450"} {
		if strings.Contains(logs.String(), secret) || strings.Contains(string(raw), secret) {
			t.Errorf("the log or the saved state holds %q:\nlog:\n%s\nstate: %s", secret, logs.String(), raw)
		}
	}
	if !strings.Contains(logs.String(), "Using the user data of Secret default/ud, key userdata") {
		t.Errorf("the debug log does not say where the user data came from:\n%s", logs.String())
	}

	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	fc.unchanged(t, "remove", made)
	if vms, _, secrets := fc.objects(); vms != 0 || secrets != 1 {
		t.Errorf("after remove: %d VMs, %d Secrets; want only the user's", vms, secrets)
	}
}

// A create without a pre-flight in its process reads the Secret itself, once, with KubeVirt's second key when
// the first is absent, and refuses what the pre-flight refuses before making anything.
func TestCreateReadsDataSecretsItself(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	fc.userSecret("ud", map[string]string{"userData": secretUser, "networkData": secretNetwork}, nil)
	if err := newTestDriver(t, fc, "m1", dataSecretOptions()).Create(); err != nil {
		t.Fatal(err)
	}
	if n := fc.secretGets("ud"); n != 1 {
		t.Errorf("the create read the Secret %d times, want once", n)
	}
	own, err := kube.Get(context.Background(), fc.C, kube.Secrets, "default", "m1-cloudinit")
	if err != nil || !strings.Contains(string(own.Data["userdata"]), secretToken) || string(own.Data["networkdata"]) != secretNetwork {
		t.Errorf("the cloud-init Secret: %v %q", err, own.Data)
	}

	err = newTestDriver(t, fc, "m2", dataSecretOptions(config.FlagUserDataSecret, "ud:userdata")).Create()
	configtest.WantAll(t, errString(err), "cannot create the machine on Harvester: --harvester-user-data-secret: Secret default/ud has no key userdata (its keys: networkData and userData); name the key as ud:KEY")
	if _, err := kube.Get(context.Background(), fc.C, kube.Secrets, "default", "m2-cloudinit"); !kube.IsGone(err, "secrets", "m2-cloudinit") {
		t.Errorf("a refused create made its Secret: %v", err)
	}
}

// Another machine's cloud-init Secret, as a node driver made it (gc2-pool1-abcde-cloudinit, with the driver's
// labels), is refused as a data Secret by the pre-flight and by a create that runs without one, before anything
// is made: its join token and cloud-provider kubeconfig never reach this guest.
func TestAnotherMachinesSecretIsNoDataSecret(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	other := fc.userSecret("gc2-pool1-abcde-cloudinit", map[string]string{"userdata": secretUser},
		map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "gc2-pool1-abcde"})
	opts := dataSecretOptions(config.FlagUserDataSecret, "gc2-pool1-abcde-cloudinit", config.FlagNetworkDataSecret, "")
	const want = "--harvester-user-data-secret: Secret default/gc2-pool1-abcde-cloudinit was made by a node driver (label harvesterhci.io/creator=docker-machine-driver-harvester)"
	configtest.WantAll(t, errString(newTestDriver(t, fc, "m1", opts).PreCreateCheck()), want)
	err := newTestDriver(t, fc, "m1", opts).Create()
	configtest.WantAll(t, errString(err), "cannot create the machine on Harvester: "+want)
	if strings.Contains(errString(err), "PLANTED") {
		t.Errorf("the refusal quotes the Secret: %v", err)
	}
	if vms, _, secrets := fc.objects(); vms != 0 || secrets != 1 {
		t.Errorf("after the refused create: %d VMs, %d Secrets; want only the other machine's", vms, secrets)
	}
	fc.unchanged(t, "the refused create", other)
}

// The data Secrets' check says what is wrong with each Secret, under its flag, naming the Secret and never
// quoting what it holds: absent, unreadable, without the key, empty, too large, binary, not what cloud-init
// reads, the driver's own Secret; hostile values are refused by their size or kind before anything parses them.
func TestDataSecretsCheck(t *testing.T) {
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	const ud = "--harvester-user-data-secret: "
	tests := []struct {
		name    string
		secret  map[string]string // Secret ud's data; nil: no Secret
		meta    func(*corev1.Secret)
		opts    []any
		forbid  bool
		want    []string // problems; none: the check passes with detail want[0]
		passing bool
	}{
		{name: "absent", want: []string{ud + "Secret default/ud does not exist; create it in namespace default (kubectl -n default create secret generic ud --from-file=userdata=FILE), or fix the name",
			"--harvester-network-data-secret: Secret default/ud does not exist"}},
		{name: "forbidden", secret: map[string]string{"userdata": secretUser}, forbid: true, opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "the credential may not read Secret default/ud (403 Forbidden): ask for a Harvester role that may get secrets in namespace default"}},
		{name: "no such key", secret: map[string]string{"user-data": secretUser}, opts: []any{config.FlagNetworkDataSecret, "ud:net"},
			want: []string{ud + "Secret default/ud has no key userdata or userData (its keys: user-data); name the key as ud:KEY",
				"--harvester-network-data-secret: Secret default/ud has no key net (its keys: user-data); name the key as ud:KEY"}},
		{name: "no key at all", secret: map[string]string{}, opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/ud has no key userdata or userData (it has none)"}},
		{name: "empty", secret: map[string]string{"userdata": " \n", "networkdata": ""},
			want: []string{ud + "Secret default/ud, key userdata is empty; put the data there, or leave the flag empty", "--harvester-network-data-secret: Secret default/ud, key networkdata is empty"}},
		{name: "a huge value", secret: map[string]string{"userdata": "#cloud-config\n#" + strings.Repeat(secretToken, 8<<20/len(secretToken)), "networkdata": strings.Repeat("#", 2<<20)},
			want: []string{ud + "Secret default/ud, key userdata: is 8 MiB, over the 1 MiB limit (the most a cloud-init Secret holds)",
				"--harvester-network-data-secret: Secret default/ud, key networkdata: is 2 MiB, over the 1 MiB limit"}},
		{name: "binary", secret: map[string]string{"userdata": "#cloud-config\n\xff\xfe" + secretToken, "networkdata": "\x00\xffversion: 2"},
			want: []string{ud + "Secret default/ud, key userdata holds binary data, not user data as cloud-init reads it: text (cloud-config, a script, MIME multipart) or gzip of it",
				"--harvester-network-data-secret: Secret default/ud, key networkdata holds binary data, not the text of a network-config (YAML or JSON)"}},
		{name: "not what cloud-init reads", secret: map[string]string{"userdata": "#cloud-config\nruncmd: " + secretToken + "\n", "networkdata": "version: 3\n"},
			want: []string{ud + "Secret default/ud, key userdata: runcmd: must be a list, not a string",
				"--harvester-network-data-secret: Secret default/ud, key networkdata: version: must be the number 1 or 2, not 3"}},
		{name: "base64 once more", secret: map[string]string{"userdata": "I2Nsb3VkLWNvbmZpZwp0aW1lem9uZTogVVRDCg=="}, opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/ud, key userdata: not a format cloud-init reads"}},
		{name: "gzip inflating past the limit", secret: map[string]string{"userdata": gz("#cloud-config\n#" + strings.Repeat("x", 2<<20))}, opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/ud, key userdata: gzip: inflates to more than 1 MiB, over the 1 MiB limit (the most a cloud-init Secret holds)"}},
		{name: "the driver's own Secret", opts: []any{config.FlagUserDataSecret, "m1-cloudinit", config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/m1-cloudinit is the cloud-init Secret the driver makes for machine m1 (with the merged user data, and deletes with it): keep your data in a Secret of another name"}},
		{name: "another machine's cloud-init Secret", secret: map[string]string{"userdata": secretUser},
			meta: func(s *corev1.Secret) {
				s.Labels = map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "gc2-pool1-abcde"}
			},
			opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/ud was made by a node driver (label harvesterhci.io/creator=docker-machine-driver-harvester): another machine's cloud-init Secret or a guest cluster's cloud-provider token, which hold that machine's join token and Harvester credentials; keep your data in a Secret of your own"}},
		{name: "a VM's cloud-init Secret", secret: map[string]string{"userdata": secretUser},
			meta: func(s *corev1.Secret) {
				s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "old-vm", UID: "u1"}}
			},
			want: []string{ud + "Secret default/ud belongs to VirtualMachine old-vm (its owner): it is that VM's cloud-init, which may hold its join token and passwords; keep your data in a Secret of your own",
				"--harvester-network-data-secret: Secret default/ud belongs to VirtualMachine old-vm"}},
		{name: "a service account's token", secret: map[string]string{"userdata": secretUser},
			meta: func(s *corev1.Secret) { s.Type = corev1.SecretTypeServiceAccountToken },
			opts: []any{config.FlagNetworkDataSecret, ""},
			want: []string{ud + "Secret default/ud is a service account's token (type kubernetes.io/service-account-token), a Harvester credential; keep your data in a Secret of your own"}},
		{name: "gzip and KubeVirt's second keys", secret: map[string]string{"userData": gz(secretUser), "networkData": secretNetwork}, passing: true,
			want: []string{"user data from Secret default/ud, key userData (1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			if tt.secret != nil {
				s := fc.userSecret("ud", tt.secret, nil)
				if tt.meta != nil {
					tt.meta(s)
					if _, err := kube.Update(context.Background(), fc.C, kube.Secrets, "default", s); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.forbid { // the read of ud only: the pre-flight also reads the machine's cloud-init Secret
				fc.Dyn.PrependReactor("get", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.(k8stesting.GetAction).GetName() != "ud" {
						return false, nil, nil
					}
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "ud", errors.New("user cannot get secrets"))
				})
			}
			c := checkNamed(t, newTestDriver(t, fc, "m1", dataSecretOptions(tt.opts...)), preflight.CheckDataSecrets)
			var lines []string
			for _, p := range c.Problems {
				lines = append(lines, p.String())
			}
			got := strings.Join(lines, "\n")
			if tt.passing {
				if got != "" || !strings.HasPrefix(c.Detail, tt.want[0]) {
					t.Errorf("problems %q, detail %q; want none and %q", got, c.Detail, tt.want[0])
				}
				return
			}
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), got)
			}
			configtest.WantAll(t, got, tt.want...)
			if strings.Contains(got, "PLANTED") {
				t.Errorf("a problem quotes the Secret's value:\n%s", got)
			}
		})
	}
}

// Without the namespace there is no Secret to read: the check is skipped with the namespace's reason, and a
// configuration without the flags makes no read at all.
func TestDataSecretsCheckSkipped(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	c := checkNamed(t, newTestDriver(t, fc, "m1", dataSecretOptions(config.FlagVMNamespace, "absent", config.FlagImageName, "default/ubuntu")), preflight.CheckDataSecrets)
	if c.Skipped != "namespace absent does not exist" || len(c.Problems) > 0 {
		t.Errorf("in a namespace that does not exist: %+v", c)
	}
	fc = newFakeCluster(t)
	c = checkNamed(t, newTestDriver(t, fc, "m1", createOptions()), preflight.CheckDataSecrets)
	if c.Skipped != "--harvester-user-data-secret and --harvester-network-data-secret not given" || fc.secretGets("ud") != 0 {
		t.Errorf("without the flags: %+v", c)
	}
}

// A Secret of the user's that bears the name of a machine's cloud-init Secret — even one that looks like a
// leftover of this driver, with its labels for that machine — is never deleted: not by the create that names it
// (the pre-flight and the create refuse it), not by that machine's remove, not by the rollback of another create.
func TestUsersSecretOfTheDriversNameIsNeverDeleted(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	looksOurs := map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "m1"}
	made := fc.userSecret("m1-cloudinit", map[string]string{"userdata": secretUser}, looksOurs)

	d := newTestDriver(t, fc, "m1", dataSecretOptions(config.FlagUserDataSecret, "m1-cloudinit", config.FlagNetworkDataSecret, ""))
	err := d.PreCreateCheck()
	configtest.WantAll(t, errString(err), "--harvester-user-data-secret: Secret default/m1-cloudinit is the cloud-init Secret the driver makes for machine m1")
	if err := d.Create(); err == nil {
		t.Fatal("the create of a machine whose data Secret is its own cloud-init Secret succeeded")
	}
	if err := d.Remove(); err != nil {
		t.Fatalf("remove: %v", err)
	}
	fc.unchanged(t, "the machine's create and remove", made)

	// Another machine whose create fails after making its own cloud-init Secret rolls back only that one.
	fc.FailOn("create", "virtualmachines", apierrors.NewInternalError(errors.New("admission webhook said no")))
	fc.userSecret("ud", map[string]string{"userdata": secretUser}, nil)
	d2 := newTestDriver(t, fc, "m2", dataSecretOptions(config.FlagNetworkDataSecret, ""))
	if err := d2.Create(); err == nil {
		t.Fatal("the create succeeded with its VM refused")
	}
	fc.unchanged(t, "another create's rollback", made)
	if _, err := kube.Get(context.Background(), fc.C, kube.Secrets, "default", "m2-cloudinit"); !kube.IsGone(err, "secrets", "m2-cloudinit") {
		t.Errorf("the rollback left the create's own Secret: %v", err)
	}
}
