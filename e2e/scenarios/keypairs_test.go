package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// People's key pairs (--harvester-ssh-keypairs, harvester/harvester#4616): one in the machine's namespace by bare
// name, one in another namespace; neither private key is given. Their public keys reach the cloud-init Secret
// beside the driver's own, the VM names them in harvesterhci.io/sshNames, and rm leaves nothing of the machine
// while the key pairs, which are the people's, stay.
func TestPeoplesKeyPairs(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	ctx := context.Background()
	name := "keys-1"
	if _, err := fixtures.Seed(ctx, b.AdminConfig(), fixtures.Spec{KeyPairs: []fixtures.KeyPair{{Namespace: ns, Name: "alice"}}}); err != nil {
		t.Fatal(err)
	}
	refs := []string{ns + "/alice", "default/e2e-key"} // e2e-key is in the default seed
	keys := map[string]string{}
	keypairs := schema.GroupVersionResource{Group: "harvesterhci.io", Version: "v1beta1", Resource: "keypairs"}
	for _, ref := range refs {
		kpNS, kpName, _ := strings.Cut(ref, "/")
		kp, err := b.Dynamic.Resource(keypairs).Namespace(kpNS).Get(ctx, kpName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keys[ref] = kp.Object["spec"].(map[string]any)["publicKey"].(string)
	}

	cli.must(append(createArgs(t, ns, "--harvester-ssh-keypairs", "alice, default/e2e-key"), name)...)

	secret, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-cloudinit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys"`
	}
	if err := yaml.Unmarshal(secret.Data["userdata"], &doc); err != nil {
		t.Fatalf("user data does not parse: %v", err)
	}
	own, err := os.ReadFile(filepath.Join(cli.Store, "machines", name, "id_rsa.pub"))
	if err != nil {
		t.Fatalf("the machine's key is not in the store: %v", err)
	}
	want := []string{strings.TrimSpace(string(own)), keys[refs[0]], keys[refs[1]]}
	if got := strings.Join(doc.SSHAuthorizedKeys, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("ssh_authorized_keys:\n%s\nwant the driver's key, then the two key pairs':\n%s", got, strings.Join(want, "\n"))
	}
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sshNames []string
	if err := json.Unmarshal([]byte(vm.Spec.Template.ObjectMeta.Annotations["harvesterhci.io/sshNames"]), &sshNames); err != nil || strings.Join(sshNames, ",") != strings.Join(refs, ",") {
		t.Errorf("harvesterhci.io/sshNames %v (%v), want %v", sshNames, err, refs)
	}

	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
	for _, ref := range refs {
		kpNS, kpName, _ := strings.Cut(ref, "/")
		if _, err := b.Dynamic.Resource(keypairs).Namespace(kpNS).Get(ctx, kpName, metav1.GetOptions{}); err != nil {
			t.Errorf("key pair %s is gone after rm: %v", ref, err)
		}
	}
}
