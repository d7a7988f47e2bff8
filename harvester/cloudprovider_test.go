package harvester

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// harvesterRBAC seeds Harvester's two ClusterRoles and its vip ConfigMap, and imitates kube-controller-manager's
// token controller: a service-account token Secret gets its token and CA shortly after it is created.
func (fc *fakeCluster) harvesterRBAC() {
	ctx := context.Background()
	for _, role := range []string{clusterRoleCloudProvider, clusterRoleCSIDriver} {
		fc.ok(kube.Create(ctx, fc.c, kube.ClusterRoles, "", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}}))
	}
	fc.ok(kube.Create(ctx, fc.c, kube.Namespaces, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: harvesterSystemNamespace}}))
	fc.ok(kube.Create(ctx, fc.c, kube.ConfigMaps, harvesterSystemNamespace, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: vipConfigMapName}, Data: map[string]string{"ip": "192.168.10.100"}}))
	fc.dyn.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if u.Object["type"] != string(corev1.SecretTypeServiceAccountToken) {
			return false, nil, nil
		}
		ns, name := u.GetNamespace(), u.GetName()
		go func() { // not from inside the reactor: the fake holds its lock
			eventually(fc.t, "the token Secret exists", func() bool { _, err := kube.Get(ctx, fc.c, kube.Secrets, ns, name); return err == nil })
			s, _ := kube.Get(ctx, fc.c, kube.Secrets, ns, name)
			if filled(s) {
				return // a create that failed with AlreadyExists: the controller has nothing to do
			}
			s.Data = map[string][]byte{"token": []byte("sa-token-" + name), "ca.crt": []byte("harvester-ca")}
			if _, err := kube.Update(ctx, fc.c, kube.Secrets, ns, s); err != nil {
				fc.t.Errorf("token controller: %v", err)
			}
		}()
		return false, nil, nil
	})
}

func TestCloudProviderAccount(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterRBAC()
	captureLog(t)
	ctx := context.Background()
	acct := CloudProviderAccount{Namespace: "default", ServiceAccount: "gc8"}
	first, err := ensureCloudProviderAccount(ctx, fc.c, acct)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	cluster, user, kctx := cfg.Clusters["default"], cfg.AuthInfos["default"], cfg.Contexts["default"]
	if cluster == nil || cluster.Server != "https://192.168.10.100:6443" || string(cluster.CertificateAuthorityData) != "harvester-ca" ||
		user == nil || user.Token != "sa-token-gc8-token" || kctx == nil || kctx.Namespace != "default" || cfg.CurrentContext != "default" {
		t.Fatalf("kubeconfig:\n%s", first)
	}
	rb, err := kube.Get(ctx, fc.c, kube.RoleBindings, "default", "default-gc8")
	if err != nil || rb.RoleRef.Name != clusterRoleCloudProvider || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "gc8" {
		t.Fatalf("RoleBinding: %v %+v", err, rb)
	}
	crb, err := kube.Get(ctx, fc.c, kube.ClusterRoleBindings, "", "default-gc8")
	if err != nil || crb.RoleRef.Name != clusterRoleCSIDriver || len(crb.Subjects) != 1 {
		t.Fatalf("ClusterRoleBinding: %v %+v", err, crb)
	}

	fc.dyn.ClearActions()
	second, err := ensureCloudProviderAccount(ctx, fc.c, acct)
	if err != nil || string(second) != string(first) {
		t.Fatalf("a second run must give the same kubeconfig: %v", err)
	}
	for _, a := range fc.dyn.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "patch" || a.GetVerb() == "delete" {
			t.Errorf("a second run changed something: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestCloudProviderAccountRejects(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterRBAC()
	captureLog(t)
	ctx := context.Background()
	fc.ok(kube.Create(ctx, fc.c, kube.RoleBindings, "default", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "default-taken", Namespace: "default"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}))
	tests := []struct {
		acct CloudProviderAccount
		want string
	}{
		{CloudProviderAccount{Namespace: "default", ServiceAccount: "gc8", Server: "https://rancher.example.com/k8s/clusters/c-m-abc12"}, "is a Rancher proxy URL"},
		{CloudProviderAccount{Namespace: "default", ServiceAccount: "gc8", Server: "http://10.0.0.1:6443"}, "must be an https URL"},
		{CloudProviderAccount{Namespace: "nowhere", ServiceAccount: "gc8"}, "namespace nowhere does not exist in Harvester"},
		{CloudProviderAccount{Namespace: "default", ServiceAccount: "Bad_Name"}, "is not a valid name"},
		{CloudProviderAccount{Namespace: "default", ServiceAccount: "taken"}, "RoleBinding default-taken exists but binds ClusterRole admin, not harvesterhci.io:cloudprovider"},
	}
	for _, tt := range tests {
		if _, err := ensureCloudProviderAccount(ctx, fc.c, tt.acct); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.acct, err, tt.want)
		}
	}
	fc2 := newFakeCluster(t)
	if _, err := ensureCloudProviderAccount(ctx, fc2.c, CloudProviderAccount{Namespace: "default", ServiceAccount: "gc8"}); err == nil ||
		!strings.Contains(err.Error(), "ClusterRole harvesterhci.io:cloudprovider does not exist") {
		t.Errorf("without Harvester's roles: %v", err)
	}
}
