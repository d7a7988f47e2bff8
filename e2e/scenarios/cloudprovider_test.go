package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The generator makes the guest cluster's identity; checked with SelfSubjectAccessReviews on the real API
// server, it may do what the Harvester cloud provider and CSI driver need, in its namespace only, and no more.
func TestCloudProviderAccountOnTheControlPlane(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	generate := func() []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "docker-machine-driver-harvester"), "cloud-provider-config",
			"--kubeconfig", b.KubeconfigPath, "--namespace", ns, "--cluster-name", "gc1", "--server", "https://192.0.2.100:6443")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("cloud-provider-config: %v\n%s", err, stderr.String())
		}
		return out
	}
	first := generate()
	ctx := context.Background()
	sa, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "gc1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if second := generate(); !bytes.Equal(first, second) {
		t.Errorf("a second run gives another kubeconfig")
	}
	if again, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "gc1", metav1.GetOptions{}); err != nil || again.ResourceVersion != sa.ResourceVersion {
		t.Errorf("a second run changed the service account (%v)", err)
	}

	cfg, err := clientcmd.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || kctx.Namespace != ns || cfg.Clusters[kctx.Cluster].Server != "https://192.0.2.100:6443" || len(cfg.Clusters[kctx.Cluster].CertificateAuthorityData) == 0 {
		t.Fatalf("kubeconfig:\n%s", first)
	}
	// Ask as that identity, against the test bed's API server (the VIP in the kubeconfig is the guests' address).
	asGuest := b.AdminConfig()
	asGuest.BearerToken, asGuest.BearerTokenFile = cfg.AuthInfos[kctx.AuthInfo].Token, ""
	asGuest.Username, asGuest.Password, asGuest.CertData, asGuest.KeyData, asGuest.CertFile, asGuest.KeyFile = "", "", nil, nil, "", ""
	guest, err := kubernetes.NewForConfig(asGuest)
	if err != nil {
		t.Fatal(err)
	}
	may := func(namespace, group, resource, verb string) bool {
		t.Helper()
		r, err := guest.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Group: group, Resource: resource, Verb: verb}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
		if !may(ns, "loadbalancer.harvesterhci.io", "loadbalancers", verb) {
			t.Errorf("the cloud provider may not %s load balancers in its namespace", verb)
		}
	}
	for _, res := range []string{"virtualmachines", "virtualmachineinstances"} {
		for _, verb := range []string{"get", "list", "watch"} {
			if !may(ns, "kubevirt.io", res, verb) {
				t.Errorf("the cloud provider may not %s %s", verb, res)
			}
		}
	}
	for _, verb := range []string{"get", "create", "delete"} {
		if !may(ns, "", "persistentvolumeclaims", verb) {
			t.Errorf("the CSI driver may not %s volumes", verb)
		}
	}
	if !may("", "storage.k8s.io", "storageclasses", "list") {
		t.Errorf("the CSI driver may not list storage classes")
	}
	for _, deny := range []struct{ namespace, group, resource, verb string }{
		{ns, "", "secrets", "get"}, {ns, "", "secrets", "list"},
		{"default", "kubevirt.io", "virtualmachines", "get"},
		{"default", "loadbalancer.harvesterhci.io", "loadbalancers", "create"},
		{"default", "", "persistentvolumeclaims", "delete"},
		{ns, "kubevirt.io", "virtualmachines", "delete"},
	} {
		if may(deny.namespace, deny.group, deny.resource, deny.verb) {
			t.Errorf("the guest identity may %s %s in namespace %q; it must not", deny.verb, deny.resource, deny.namespace)
		}
	}
}

// A Rancher-style create that asks the driver to generate the guest's cloud provider config: the guest gets the
// scoped account's kubeconfig at both paths, never the driver's credential; rm keeps the account.
func TestCreateWithGeneratedCloudProviderConfig(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	ctx := context.Background()
	for _, tt := range []struct {
		cluster string
		flags   []string
		files   map[string]string // path → what it holds besides the token ("" for the kubeconfig)
	}{
		{"gc2", nil, map[string]string{
			"/etc/kubernetes/cloud-config": "", "/var/lib/rancher/rke2/etc/config-files/cloud-provider-config": ""}},
		{"k3s2", []string{"--harvester-cloud-provider-distribution", "k3s", "--harvester-cloud-provider-drop-in"}, map[string]string{
			"/etc/kubernetes/cloud-config": "", "/var/lib/rancher/k3s/etc/config-files/cloud-provider-config": "",
			"/etc/rancher/k3s/config.yaml.d/90-harvester-cloud-provider.yaml": "disable-cloud-controller: true"}},
	} {
		name := tt.cluster + "-pool1-abcde-fghij"
		args := append([]string{"--harvester-cluster-name", tt.cluster, "--harvester-generate-cloud-provider-config",
			"--harvester-cloud-provider-server", "https://192.0.2.100:6443"}, tt.flags...)
		cli.must(append(createArgs(t, ns, args...), name)...)
		secret, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-cloudinit", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			WriteFiles []struct{ Path, Encoding, Content, Owner, Permissions string } `yaml:"write_files"`
		}
		if err := yaml.Unmarshal(secret.Data["userdata"], &doc); err != nil {
			t.Fatal(err)
		}
		token, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, tt.cluster+"-token", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, f := range doc.WriteFiles {
			holds, ok := tt.files[f.Path]
			if !ok {
				if strings.Contains(f.Path, "rancher/rke2") || strings.Contains(f.Path, "rancher/k3s") || strings.Contains(f.Path, "cloud-config") {
					t.Errorf("%s: unexpected file %s", tt.cluster, f.Path)
				}
				continue
			}
			content, _ := base64.StdEncoding.DecodeString(f.Content)
			want := holds
			if want == "" {
				want = string(token.Data["token"])
			}
			if !strings.Contains(string(content), want) || f.Owner != "root:root" || f.Permissions != "0600" {
				t.Errorf("%s: %s: %+v", tt.cluster, f.Path, f)
			}
			found[f.Path] = true
		}
		if len(found) != len(tt.files) {
			t.Errorf("%s: the guest gets %d of its %d cloud provider files: %v", tt.cluster, len(found), len(tt.files), found)
		}
		admin := string(b.AdminKubeconfig())
		for _, line := range strings.Split(admin, "\n") {
			if strings.Contains(line, "token:") && strings.Contains(string(secret.Data["userdata"]), strings.TrimSpace(strings.SplitN(line, ":", 2)[1])) {
				t.Fatalf("the driver's own credential is in the guest's user data")
			}
		}
		cli.must("rm", "-y", name)
		if _, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, tt.cluster, metav1.GetOptions{}); err != nil {
			t.Errorf("rm removed the guest cluster's cloud provider account: %v", err)
		}
	}
}
