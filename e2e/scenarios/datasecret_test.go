package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// User data and network data kept in Harvester (--harvester-user-data-secret, --harvester-network-data-secret),
// as Terraform's harvester_cloudinit_secret keeps them: one Secret of the VM namespace with the keys userdata and
// networkdata. Through the real rancher-machine, in the Rancher flow (its install script in the cloud-config):
// the driver's cloud-init Secret holds the Secret's user data merged with the guest agent, the driver's key and
// Rancher's install script, and its network data as it is; rancher-machine's store holds none of it, nor does
// the output, the plugin's debug lines included; the user's Secret is the same object, unchanged, after create
// and rm. check reads the Secret as the pre-flight does, and tells a credential that may not. A machine whose
// Secret does not exist is refused before anything is made, naming the flag and the Secret.
func TestDataSecretsInHarvester(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	ctx := context.Background()
	const (
		name    = "ud-pool1-abcde-fghij"
		token   = "PLANTEDjoinTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0"
		network = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n    mtu: 1450\n"
	)
	userData := "#cloud-config\ntimezone: Europe/Berlin\nwrite_files:\n- path: /etc/e2e-join-token\n  permissions: '0600'\n  content: " + token + "\n"
	made, err := b.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pool1-cloud-init"},
		Data:       map[string][]byte{"userdata": []byte(userData), "networkdata": []byte(network)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// check, the create's pre-flight: the admin reads the Secret; a viewer (Kubernetes' view role reads no
	// Secrets) is refused by the API server, and the line says so, naming the flag and the Secret.
	dataArgs := append(checkArgs(ns), "--harvester-user-data-secret", "pool1-cloud-init", "--harvester-network-data-secret", "pool1-cloud-init:networkdata")
	out, code := runCheck(t, b.AdminKubeconfig(), dataArgs...)
	if want := "ok       data Secrets          user data from Secret " + ns + "/pool1-cloud-init, key userdata ("; code != 0 || !strings.Contains(out, want) || strings.Contains(out, token) {
		t.Errorf("check: exit %d, want 0 and %q, without the Secret's content", code, want)
	}
	viewer, err := b.Credential(ctx, credential.Spec{Namespace: ns, Name: "viewer", NamespaceRoles: []string{"view"}})
	if err != nil {
		t.Fatal(err)
	}
	out, code = runCheck(t, viewer.Kubeconfig, dataArgs...)
	if want := "problem  data Secrets          --harvester-user-data-secret: the credential may not read Secret " + ns + "/pool1-cloud-init (403 Forbidden)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("check with a viewer's credential: exit %d, want 1 and %q", code, want)
	}

	create := append(createArgs(t, ns, "--harvester-user-data-secret", "pool1-cloud-init",
		"--harvester-network-data-secret", "pool1-cloud-init:networkdata"), name)
	r := cli.must(append([]string{"--debug"}, create...)...) // the plugin's debug lines too

	own, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-cloudinit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	publicKey, err := os.ReadFile(filepath.Join(cli.Store, "machines", name, "id_rsa.pub"))
	if err != nil {
		t.Fatalf("the machine's key is not in the store: %v", err)
	}
	checkRancherUserData(t, string(own.Data["userdata"]), name, strings.TrimSpace(string(publicKey))) // the guest agent, the key, Rancher's script last, the Secret's timezone
	if !strings.Contains(string(own.Data["userdata"]), "content: "+token) || !strings.Contains(string(own.Data["userdata"]), "/etc/e2e-join-token") {
		t.Errorf("the Secret's write_files did not reach the cloud-init Secret:\n%s", own.Data["userdata"])
	}
	if got := string(own.Data["networkdata"]); got != network {
		t.Errorf("network data %q, want the Secret's %q", got, network)
	}
	if held := storeFilesHolding(t, cli.Store, name, token, "mtu: 1450"); len(held) > 0 {
		t.Errorf("rancher-machine's store holds the Secret's content in %v", held)
	}
	if strings.Contains(r.Output, token) || !strings.Contains(r.Output, "Using the user data of Secret "+ns+"/pool1-cloud-init, key userdata") {
		t.Errorf("the output (with the plugin's debug lines) holds the Secret's content, or does not say where the user data came from:\n%s", r.Output)
	}
	sameSecret(t, b, made, "create")

	quiet(t, cli.must("rm", "-y", name))
	sameSecret(t, b, made, "rm")
	left, err := b.Leftovers(ctx, ns, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(left, []string{"Secret pool1-cloud-init"}) {
		t.Errorf("after rm, namespace %s holds %v; want the user's Secret alone", ns, left)
	}

	absent := cli.run(append(createArgs(t, ns, "--harvester-user-data-secret", "absent"), "ud-absent")...)
	if absent.Err == nil || !strings.Contains(absent.Output, "--harvester-user-data-secret: Secret "+ns+"/absent does not exist") {
		t.Errorf("a create naming a Secret that does not exist: %s", absent)
	}
	left, err = b.Leftovers(ctx, ns, 0)
	if err != nil || !reflect.DeepEqual(left, []string{"Secret pool1-cloud-init"}) {
		t.Errorf("after the refused create, namespace %s holds %v (%v)", ns, left, err)
	}
}

// sameSecret fails t when the user's Secret is not the object made, as made: UID, resourceVersion, labels,
// annotations, owners, data.
func sameSecret(t *testing.T, b *testbed.Bed, made *corev1.Secret, after string) {
	t.Helper()
	now, err := b.Kube.CoreV1().Secrets(made.Namespace).Get(context.Background(), made.Name, metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("after %s the user's Secret: %v", after, err)
	case now.UID != made.UID || now.ResourceVersion != made.ResourceVersion || !reflect.DeepEqual(now.Labels, made.Labels) ||
		!reflect.DeepEqual(now.Annotations, made.Annotations) || len(now.OwnerReferences) > 0 || len(now.Finalizers) > 0 || !reflect.DeepEqual(now.Data, made.Data):
		t.Errorf("after %s the user's Secret changed:\n%+v\nwas\n%+v", after, now.ObjectMeta, made.ObjectMeta)
	}
}
