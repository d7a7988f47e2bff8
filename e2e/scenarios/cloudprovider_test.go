package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The generator makes the guest cluster's identity; SubjectAccessReviews on the real API server, asked as the
// admin for the account, show it may do what the table of docs/cloud-provider.md lists — in its VM namespace, or in
// harvester-system for NetworkFilesystems, or the cluster-scoped reads — and nothing of it elsewhere.
func TestCloudProviderAccountOnTheControlPlane(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	verb := func(cluster string) ([]byte, string, error) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "docker-machine-driver-harvester"), "cloud-provider-config",
			"--kubeconfig", b.KubeconfigPath, "--namespace", ns, "--cluster-name", cluster, "--server", "https://192.0.2.100:6443")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return out, stderr.String(), err
	}
	generate := func() []byte {
		t.Helper()
		out, stderr, err := verb("gc1")
		if err != nil {
			t.Fatalf("cloud-provider-config: %v\n%s", err, stderr)
		}
		return out
	}
	ctx := context.Background()
	const account = "gc1-cloud-provider"
	cleanUpAccount(t, b, ns, account)
	first := generate()
	sa, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, account, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role, err := b.Kube.RbacV1().Roles(ns).Get(ctx, account, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if second := generate(); !bytes.Equal(first, second) {
		t.Errorf("a second run gives another kubeconfig")
	}
	if again, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, account, metav1.GetOptions{}); err != nil || again.ResourceVersion != sa.ResourceVersion {
		t.Errorf("a second run changed the service account (%v)", err)
	}
	if again, err := b.Kube.RbacV1().Roles(ns).Get(ctx, account, metav1.GetOptions{}); err != nil || again.ResourceVersion != role.ResourceVersion {
		t.Errorf("a second run changed the role (%v)", err)
	}

	cfg, err := clientcmd.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || kctx.Namespace != ns || cfg.Clusters[kctx.Cluster].Server != "https://192.0.2.100:6443" || len(cfg.Clusters[kctx.Cluster].CertificateAuthorityData) == 0 {
		t.Fatalf("kubeconfig:\n%s", first)
	}

	// Asked as the admin about the account, with the groups its token authenticates with.
	may := func(a authorizationv1.ResourceAttributes) bool {
		t.Helper()
		r, err := b.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "system:serviceaccount:" + ns + ":" + account,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &a,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	// The guide's table: where each row applies — the VM namespace, harvester-system, or cluster-wide ("").
	for _, row := range []struct {
		where, group, resource, subresource string
		names, verbs                        []string
	}{
		{ns, "loadbalancer.harvesterhci.io", "loadbalancers", "", nil, []string{"get", "list", "watch", "create", "update", "delete"}},
		{ns, "kubevirt.io", "virtualmachines", "", nil, []string{"get", "patch"}},
		{ns, "kubevirt.io", "virtualmachineinstances", "", nil, []string{"get", "list", "watch"}},
		{ns, "subresources.kubevirt.io", "virtualmachines", "addvolume", nil, []string{"update"}},
		{ns, "subresources.kubevirt.io", "virtualmachines", "removevolume", nil, []string{"update"}},
		{ns, "subresources.kubevirt.io", "virtualmachineinstances", "removevolume", nil, []string{"update"}},
		{ns, "subresources.kubevirt.io", "virtualmachineinstances", "guestosinfo", nil, []string{"get"}},
		{ns, "", "persistentvolumeclaims", "", nil, []string{"get", "create", "update", "delete"}},
		{ns, "", "pods", "", nil, []string{"list"}},
		{ns, "snapshot.storage.k8s.io", "volumesnapshots", "", nil, []string{"get", "list", "create", "delete"}},
		{ns, "harvesterhci.io", "volumeremotebackups", "", nil, []string{"get", "create", "delete"}},
		{ns, "harvesterhci.io", "volumeremoterestores", "", nil, []string{"get", "create", "delete"}},
		{"harvester-system", "harvesterhci.io", "networkfilesystems", "", nil, []string{"get", "list", "create", "update", "delete"}},
		{"", "storage.k8s.io", "storageclasses", "", nil, []string{"get"}},
		{"", "storage.k8s.io", "volumeattachments", "", nil, []string{"list"}},
		{"", "harvesterhci.io", "settings", "", []string{"csi-driver-config", "csi-online-expand-validation", "server-version"}, []string{"get"}},
	} {
		names := row.names
		if names == nil {
			names = []string{""}
		}
		for _, verb := range row.verbs {
			for _, name := range names {
				a := authorizationv1.ResourceAttributes{Namespace: row.where, Group: row.group, Resource: row.resource, Subresource: row.subresource, Verb: verb, Name: name}
				if !may(a) {
					t.Errorf("the account may not %+v", a)
				}
				if row.where == "" {
					continue
				}
				// Nothing namespaced is allowed in another guest's namespace.
				a.Namespace = "default"
				if may(a) {
					t.Errorf("the account may %+v; only in its namespace", a)
				}
			}
		}
	}
	for _, deny := range []authorizationv1.ResourceAttributes{
		{Namespace: "default", Group: "kubevirt.io", Resource: "virtualmachines", Verb: "patch"},
		{Namespace: "", Group: "kubevirt.io", Resource: "virtualmachines", Verb: "patch"},
		{Namespace: "", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Verb: "list"},
		{Namespace: "", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotcontents", Verb: "create"},
		{Namespace: "", Group: "harvesterhci.io", Resource: "volumeremotebackups", Verb: "list"},
		{Namespace: ns, Group: "harvesterhci.io", Resource: "networkfilesystems", Verb: "create"},
		{Namespace: ns, Resource: "secrets", Verb: "get"},
		{Namespace: ns, Resource: "secrets", Verb: "list"},
		{Namespace: ns, Group: "kubevirt.io", Resource: "virtualmachines", Verb: "delete"},
		{Namespace: ns, Group: "kubevirt.io", Resource: "virtualmachines", Verb: "create"},
		{Namespace: ns, Group: "rbac.authorization.k8s.io", Resource: "roles", Verb: "update", Name: account},
		{Namespace: "longhorn-system", Group: "longhorn.io", Resource: "volumes", Verb: "get"},
		{Group: "storage.k8s.io", Resource: "storageclasses", Verb: "delete"},
		{Group: "storage.k8s.io", Resource: "storageclasses", Verb: "list"},
		{Group: "storage.k8s.io", Resource: "volumeattachments", Verb: "delete"},
		{Group: "harvesterhci.io", Resource: "settings", Verb: "get", Name: "backup-target"},
		{Group: "harvesterhci.io", Resource: "settings", Verb: "update", Name: "csi-driver-config"},
		{Group: "harvesterhci.io", Resource: "settings", Verb: "list"},
	} {
		if may(deny) {
			t.Errorf("the account may %+v; it must not", deny)
		}
	}

	// An account of that name that the driver did not make is refused and left as it is.
	foreign, err := b.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gc2-cloud-provider"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out, stderr, err := verb("gc2"); err == nil || len(out) > 0 ||
		!strings.Contains(stderr, "ServiceAccount "+ns+"/gc2-cloud-provider exists and was not made by the node driver for guest cluster gc2") {
		t.Errorf("cloud-provider-config with another's account: %v\n%s", err, stderr)
	}
	if again, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil || again.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the refused account was changed (%v)", err)
	}
	if rbs, err := b.Kube.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{}); err != nil || len(rbs.Items) != 1 {
		t.Errorf("role bindings in %s: %v %v; want only gc1's", ns, err, rbs)
	}
}

// cleanUpAccount deletes, when the test ends, the objects of a cloud-provider account that outlive its namespace.
func cleanUpAccount(t *testing.T, b *testbed.Bed, ns, account string) {
	t.Cleanup(func() {
		ctx, shared := context.Background(), ns+":"+account
		_ = b.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, shared, metav1.DeleteOptions{})
		_ = b.Kube.RbacV1().ClusterRoles().Delete(ctx, shared, metav1.DeleteOptions{})
		_ = b.Kube.RbacV1().RoleBindings("harvester-system").Delete(ctx, shared, metav1.DeleteOptions{})
		_ = b.Kube.RbacV1().Roles("harvester-system").Delete(ctx, shared, metav1.DeleteOptions{})
	})
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
		cleanUpAccount(t, b, ns, tt.cluster+"-cloud-provider")
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
		token, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, tt.cluster+"-cloud-provider-token", metav1.GetOptions{})
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
		if _, err := b.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, tt.cluster+"-cloud-provider", metav1.GetOptions{}); err != nil {
			t.Errorf("rm removed the guest cluster's cloud provider account: %v", err)
		}
	}
}
