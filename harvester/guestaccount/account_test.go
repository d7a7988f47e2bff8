package guestaccount

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// newFakeCluster is a Harvester with the guest cluster's namespace default and harvester-system.
func newFakeCluster(t *testing.T) *kubefake.Cluster {
	fc := kubefake.New(t, "")
	fc.Namespace("default")
	fc.HarvesterSystem()
	kubefake.CaptureLog(t)
	return fc
}

// accountObject is one object the driver makes for a guest cluster's account.
type accountObject struct {
	kind, ns, name string
	get            func(ctx context.Context, c kube.Interface) (metav1.Object, error)
}

func getAs[T any, P interface {
	*T
	metav1.Object
}](k kube.Kind[T], ns, name string) func(context.Context, kube.Interface) (metav1.Object, error) {
	return func(ctx context.Context, c kube.Interface) (metav1.Object, error) {
		obj, err := kube.Get(ctx, c, k, ns, name)
		if err != nil {
			return nil, err
		}
		return P(obj), nil
	}
}

// accountObjects lists the objects of account <cluster>-cloud-provider in namespace ns.
func accountObjects(ns, cluster string) []accountObject {
	sa := cluster + "-cloud-provider"
	shared := ns + ":" + sa
	return []accountObject{
		{"ServiceAccount", ns, sa, getAs(kube.ServiceAccounts, ns, sa)},
		{"Secret", ns, sa + "-token", getAs(kube.Secrets, ns, sa+"-token")},
		{"Role", ns, sa, getAs(kube.Roles, ns, sa)},
		{"RoleBinding", ns, sa, getAs(kube.RoleBindings, ns, sa)},
		{"Role", harvesterSystemNamespace, shared, getAs(kube.Roles, harvesterSystemNamespace, shared)},
		{"RoleBinding", harvesterSystemNamespace, shared, getAs(kube.RoleBindings, harvesterSystemNamespace, shared)},
		{"ClusterRole", "", shared, getAs(kube.ClusterRoles, "", shared)},
		{"ClusterRoleBinding", "", shared, getAs(kube.ClusterRoleBindings, "", shared)},
	}
}

func TestEnsure(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	acct := Account{Namespace: "default", Cluster: "gc8"}
	first, err := Ensure(ctx, fc.C, acct)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	cluster, user, kctx := cfg.Clusters["default"], cfg.AuthInfos["default"], cfg.Contexts["default"]
	if cluster == nil || cluster.Server != "https://"+kubefake.VIP+":6443" || string(cluster.CertificateAuthorityData) != "harvester-ca" ||
		user == nil || user.Token != "sa-token-gc8-cloud-provider-token" || kctx == nil || kctx.Namespace != "default" || cfg.CurrentContext != "default" {
		t.Fatalf("kubeconfig:\n%s", first)
	}

	// Every object carries the driver's labels; only those in the account's namespace depend on the account.
	sa, err := kube.Get(ctx, fc.C, kube.ServiceAccounts, "default", "gc8-cloud-provider")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range accountObjects("default", "gc8") {
		obj, err := o.get(ctx, fc.C)
		if err != nil {
			t.Errorf("%s %s/%s: %v", o.kind, o.ns, o.name, err)
			continue
		}
		if l := obj.GetLabels(); l[config.LabelCreator] != config.CreatorName || l[config.LabelGuestCluster] != "gc8" {
			t.Errorf("%s %s/%s: labels %v", o.kind, o.ns, o.name, l)
		}
		owners := obj.GetOwnerReferences()
		switch {
		case o.kind == "ServiceAccount":
		case o.ns == "default" && (len(owners) != 1 || owners[0].UID != sa.UID):
			t.Errorf("%s %s/%s: owners %v, want the account", o.kind, o.ns, o.name, owners)
		case o.ns != "default" && len(owners) != 0:
			t.Errorf("%s %s/%s: owners %v; outside the account's namespace the garbage collector would delete it", o.kind, o.ns, o.name, owners)
		}
	}

	// The roles hold exactly the grants of rules.go; each binding binds its role to the account alone.
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "gc8-cloud-provider", Namespace: "default"}}
	role, err := kube.Get(ctx, fc.C, kube.Roles, "default", "gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(role.Rules, guestRules) {
		t.Errorf("Role in the VM namespace: %v\n%+v", err, role)
	}
	netfs, err := kube.Get(ctx, fc.C, kube.Roles, harvesterSystemNamespace, "default:gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(netfs.Rules, networkFilesystemRules) {
		t.Errorf("Role in harvester-system: %v\n%+v", err, netfs)
	}
	cr, err := kube.Get(ctx, fc.C, kube.ClusterRoles, "", "default:gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(cr.Rules, guestClusterRules) {
		t.Errorf("ClusterRole: %v\n%+v", err, cr)
	}
	for _, b := range []struct {
		ns, name, kind string
	}{{"default", "gc8-cloud-provider", "Role"}, {harvesterSystemNamespace, "default:gc8-cloud-provider", "Role"}} {
		rb, err := kube.Get(ctx, fc.C, kube.RoleBindings, b.ns, b.name)
		if err != nil || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: b.kind, Name: b.name}) || !reflect.DeepEqual(rb.Subjects, subjects) {
			t.Errorf("RoleBinding %s/%s: %v %+v", b.ns, b.name, err, rb)
		}
	}
	crb, err := kube.Get(ctx, fc.C, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider")
	if err != nil || crb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "default:gc8-cloud-provider"}) || !reflect.DeepEqual(crb.Subjects, subjects) {
		t.Errorf("ClusterRoleBinding: %v %+v", err, crb)
	}
	// Nothing of Harvester's own roles is bound, and nothing under the names Harvester's endpoint uses.
	for _, name := range []string{"default-gc8", "default-gc8-cloud-provider"} {
		if _, err := kube.Get(ctx, fc.C, kube.ClusterRoleBindings, "", name); err == nil {
			t.Errorf("ClusterRoleBinding %s was made", name)
		}
	}

	fc.Dyn.ClearActions()
	second, err := Ensure(ctx, fc.C, acct)
	if err != nil || string(second) != string(first) {
		t.Fatalf("a second run must give the same kubeconfig: %v", err)
	}
	for _, a := range fc.Dyn.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "patch" || a.GetVerb() == "delete" {
			t.Errorf("a second run changed something: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// The driver's own roles and bindings are brought back to their grants and to the account alone.
func TestEnsureRepairsItsRoles(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	acct := Account{Namespace: "default", Cluster: "gc8"}
	if _, err := Ensure(ctx, fc.C, acct); err != nil {
		t.Fatal(err)
	}
	role, _ := kube.Get(ctx, fc.C, kube.Roles, "default", "gc8-cloud-provider")
	role.Rules = append(role.Rules, rule("", "secrets", "*"))
	fc.OK(kube.Update(ctx, fc.C, kube.Roles, "default", role))
	crb, _ := kube.Get(ctx, fc.C, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider")
	crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: "default", Namespace: "default"})
	fc.OK(kube.Update(ctx, fc.C, kube.ClusterRoleBindings, "", crb))
	if _, err := Ensure(ctx, fc.C, acct); err != nil {
		t.Fatal(err)
	}
	if role, _ := kube.Get(ctx, fc.C, kube.Roles, "default", "gc8-cloud-provider"); !reflect.DeepEqual(role.Rules, guestRules) {
		t.Errorf("Role not repaired: %+v", role.Rules)
	}
	if crb, _ := kube.Get(ctx, fc.C, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider"); len(crb.Subjects) != 1 {
		t.Errorf("ClusterRoleBinding not repaired: %+v", crb.Subjects)
	}
}

// An object of one of the account's names that the driver did not make — unlabelled, or made for another guest
// cluster — is refused, named, and left as it is.
func TestEnsureRefusesObjectsNotItsOwn(t *testing.T) {
	ctx := context.Background()
	foreign := func(ns, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	otherCluster := map[string]string{config.LabelCreator: config.CreatorName, config.LabelGuestCluster: "gc9"}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "default"}}
	for _, tt := range []struct {
		object accountObject
		labels map[string]string
		seed   func(fc *kubefake.Cluster, m metav1.ObjectMeta)
	}{
		{accountObjects("default", "gc8")[0], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.ServiceAccounts, m.Namespace, &corev1.ServiceAccount{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[0], otherCluster, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.ServiceAccounts, m.Namespace, &corev1.ServiceAccount{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[1], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			m.Annotations = map[string]string{corev1.ServiceAccountNameKey: "default"}
			fc.OK(kube.Create(ctx, fc.C, kube.Secrets, m.Namespace, &corev1.Secret{ObjectMeta: m, Type: corev1.SecretTypeServiceAccountToken,
				Data: map[string][]byte{"token": []byte("the default account's token"), "ca.crt": []byte("ca")}}))
		}},
		{accountObjects("default", "gc8")[2], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.Roles, m.Namespace, &rbacv1.Role{ObjectMeta: m, Rules: []rbacv1.PolicyRule{rule("", "secrets", "*")}}))
		}},
		{accountObjects("default", "gc8")[3], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.RoleBindings, m.Namespace, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.Name}}))
		}},
		{accountObjects("default", "gc8")[4], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.Roles, m.Namespace, &rbacv1.Role{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[5], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.RoleBindings, m.Namespace, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.Name}}))
		}},
		{accountObjects("default", "gc8")[6], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.ClusterRoles, "", &rbacv1.ClusterRole{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[7], nil, func(fc *kubefake.Cluster, m metav1.ObjectMeta) {
			fc.OK(kube.Create(ctx, fc.C, kube.ClusterRoleBindings, "", &rbacv1.ClusterRoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}))
		}},
	} {
		o := tt.object
		what := o.kind + " " + strings.TrimPrefix(o.ns+"/"+o.name, "/")
		t.Run(what, func(t *testing.T) {
			fc := newFakeCluster(t)
			tt.seed(fc, foreign(o.ns, o.name, tt.labels))
			before, err := o.get(ctx, fc.C)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Ensure(ctx, fc.C, Account{Namespace: "default", Cluster: "gc8"})
			if err == nil || !strings.Contains(err.Error(), what+" exists and was not made by the node driver for guest cluster gc8") {
				t.Fatalf("got %v", err)
			}
			after, err := o.get(ctx, fc.C)
			if err != nil || after.GetResourceVersion() != before.GetResourceVersion() || !reflect.DeepEqual(after, before) {
				t.Errorf("the object was changed: %v\nbefore %+v\nafter  %+v", err, before, after)
			}
		})
	}
}

func TestEnsureRejects(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	tests := []struct {
		acct Account
		want string
	}{
		{Account{Namespace: "default", Cluster: "gc8", Server: "https://rancher.example.com/k8s/clusters/c-m-abc12"}, "is a Rancher proxy URL"},
		{Account{Namespace: "default", Cluster: "gc8", Server: "http://10.0.0.1:6443"}, "must be an https URL"},
		{Account{Namespace: "nowhere", Cluster: "gc8"}, "namespace nowhere does not exist in Harvester"},
		{Account{Namespace: "default", Cluster: "Bad_Name"}, `guest cluster name "Bad_Name" cannot name the guest cluster's ServiceAccount`},
		{Account{Namespace: "default", Cluster: "default"}, `guest cluster name "default" is refused`},
		{Account{Namespace: "default", Cluster: "gc8", ServiceAccount: "default"}, `service account name "default" is refused: it is the namespace's own ServiceAccount`},
		{Account{Namespace: "default", Cluster: "gc8", ServiceAccount: "Bad_Name"}, `service account name "Bad_Name" is not a valid ServiceAccount name`},
	}
	for _, tt := range tests {
		if _, err := Ensure(ctx, fc.C, tt.acct); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.acct, err, tt.want)
		}
	}
	if sas, err := kube.List(ctx, fc.C, kube.ServiceAccounts, "default", metav1.ListOptions{}); err != nil || len(sas) != 0 {
		t.Errorf("a refused account made ServiceAccounts: %v %v", err, sas)
	}
}

// The cloud-provider-config verb's client (EnsureWith) follows no redirect: nothing reaches the redirect's
// target, and the error names both hosts, not the credential.
func TestEnsureWithFollowsNoRedirect(t *testing.T) {
	const token = "Q9-guest-redirect-token"
	r := configtest.NewRedirector(t)
	_, err := EnsureWith(context.Background(), connection.Credential{Content: []byte(r.Kubeconfig(token))}, Account{Namespace: "default", Cluster: "gc1"})
	r.WantRefused(t, err, token)
}

// The account's token, once read, is withheld from whatever the cluster says next: a create's later messages and
// the cloud-provider-config verb's.
func TestEnsureHoldsTheToken(t *testing.T) {
	fc := newFakeCluster(t)
	ctx := context.Background()
	if _, err := Ensure(ctx, fc.C, Account{Namespace: "default", Cluster: "gc8"}); err != nil {
		t.Fatal(err)
	}
	const token = "sa-token-gc8-cloud-provider-token"
	fc.FailOn("get", "namespaces", apierrors.NewBadRequest("a proxy echoed "+token))
	_, err := kube.Get(ctx, fc.C, kube.Namespaces, "", "default")
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "a proxy echoed") || !strings.Contains(err.Error(), kube.Withheld) {
		t.Errorf("want the token withheld, got %v", err)
	}
}
