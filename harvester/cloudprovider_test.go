package harvester

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// harvesterSystem seeds Harvester's harvester-system namespace with its vip ConfigMap, and imitates
// kube-controller-manager's token controller: a service-account token Secret gets its token and CA shortly after
// it is created.
func (fc *fakeCluster) harvesterSystem() {
	ctx := context.Background()
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
			if filled(s) || s.Type != corev1.SecretTypeServiceAccountToken {
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

// The README's table "What the guest's account may do", written out: the roles must hold exactly these rules.
func r(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

var (
	wantNamespaceRules = []rbacv1.PolicyRule{
		r("loadbalancer.harvesterhci.io", "loadbalancers", "get", "list", "watch", "create", "update", "delete"),
		r("kubevirt.io", "virtualmachines", "get", "patch"),
		r("kubevirt.io", "virtualmachineinstances", "get", "list", "watch"),
		r("subresources.kubevirt.io", "virtualmachines/addvolume", "update"),
		r("subresources.kubevirt.io", "virtualmachines/removevolume", "update"),
		r("subresources.kubevirt.io", "virtualmachineinstances/removevolume", "update"),
		r("subresources.kubevirt.io", "virtualmachineinstances/guestosinfo", "get"),
		r("", "persistentvolumeclaims", "get", "create", "update", "delete"),
		r("", "pods", "list"),
		r("snapshot.storage.k8s.io", "volumesnapshots", "get", "list", "create", "delete"),
		r("harvesterhci.io", "volumeremotebackups", "get", "create", "delete"),
		r("harvesterhci.io", "volumeremoterestores", "get", "create", "delete"),
	}
	wantNetworkFilesystemRules = []rbacv1.PolicyRule{
		r("harvesterhci.io", "networkfilesystems", "get", "list", "create", "update", "delete"),
	}
	wantClusterRules = []rbacv1.PolicyRule{
		r("storage.k8s.io", "storageclasses", "get"),
		r("storage.k8s.io", "volumeattachments", "list"),
		{APIGroups: []string{"harvesterhci.io"}, Resources: []string{"settings"}, Verbs: []string{"get"},
			ResourceNames: []string{"csi-driver-config", "csi-online-expand-validation", "server-version"}},
	}
)

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

func TestCloudProviderAccount(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterSystem()
	captureLog(t)
	ctx := context.Background()
	acct := CloudProviderAccount{Namespace: "default", Cluster: "gc8"}
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
		user == nil || user.Token != "sa-token-gc8-cloud-provider-token" || kctx == nil || kctx.Namespace != "default" || cfg.CurrentContext != "default" {
		t.Fatalf("kubeconfig:\n%s", first)
	}

	// Every object carries the driver's labels; only those in the account's namespace depend on the account.
	sa, err := kube.Get(ctx, fc.c, kube.ServiceAccounts, "default", "gc8-cloud-provider")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range accountObjects("default", "gc8") {
		obj, err := o.get(ctx, fc.c)
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

	// The roles hold exactly the table; each binding binds its role to the account alone.
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "gc8-cloud-provider", Namespace: "default"}}
	role, err := kube.Get(ctx, fc.c, kube.Roles, "default", "gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(role.Rules, wantNamespaceRules) {
		t.Errorf("Role in the VM namespace: %v\n%+v", err, role)
	}
	netfs, err := kube.Get(ctx, fc.c, kube.Roles, harvesterSystemNamespace, "default:gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(netfs.Rules, wantNetworkFilesystemRules) {
		t.Errorf("Role in harvester-system: %v\n%+v", err, netfs)
	}
	cr, err := kube.Get(ctx, fc.c, kube.ClusterRoles, "", "default:gc8-cloud-provider")
	if err != nil || !reflect.DeepEqual(cr.Rules, wantClusterRules) {
		t.Errorf("ClusterRole: %v\n%+v", err, cr)
	}
	for _, b := range []struct {
		ns, name, kind string
	}{{"default", "gc8-cloud-provider", "Role"}, {harvesterSystemNamespace, "default:gc8-cloud-provider", "Role"}} {
		rb, err := kube.Get(ctx, fc.c, kube.RoleBindings, b.ns, b.name)
		if err != nil || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: b.kind, Name: b.name}) || !reflect.DeepEqual(rb.Subjects, subjects) {
			t.Errorf("RoleBinding %s/%s: %v %+v", b.ns, b.name, err, rb)
		}
	}
	crb, err := kube.Get(ctx, fc.c, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider")
	if err != nil || crb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "default:gc8-cloud-provider"}) || !reflect.DeepEqual(crb.Subjects, subjects) {
		t.Errorf("ClusterRoleBinding: %v %+v", err, crb)
	}
	// Nothing of Harvester's own roles is bound, and nothing under the names Harvester's endpoint uses.
	for _, name := range []string{"default-gc8", "default-gc8-cloud-provider"} {
		if _, err := kube.Get(ctx, fc.c, kube.ClusterRoleBindings, "", name); err == nil {
			t.Errorf("ClusterRoleBinding %s was made", name)
		}
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

// The driver's own roles and bindings are brought back to the table and to the account alone.
func TestCloudProviderAccountRepairsItsRoles(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterSystem()
	captureLog(t)
	ctx := context.Background()
	acct := CloudProviderAccount{Namespace: "default", Cluster: "gc8"}
	if _, err := ensureCloudProviderAccount(ctx, fc.c, acct); err != nil {
		t.Fatal(err)
	}
	role, _ := kube.Get(ctx, fc.c, kube.Roles, "default", "gc8-cloud-provider")
	role.Rules = append(role.Rules, r("", "secrets", "*"))
	fc.ok(kube.Update(ctx, fc.c, kube.Roles, "default", role))
	crb, _ := kube.Get(ctx, fc.c, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider")
	crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: "default", Namespace: "default"})
	fc.ok(kube.Update(ctx, fc.c, kube.ClusterRoleBindings, "", crb))
	if _, err := ensureCloudProviderAccount(ctx, fc.c, acct); err != nil {
		t.Fatal(err)
	}
	if role, _ := kube.Get(ctx, fc.c, kube.Roles, "default", "gc8-cloud-provider"); !reflect.DeepEqual(role.Rules, wantNamespaceRules) {
		t.Errorf("Role not repaired: %+v", role.Rules)
	}
	if crb, _ := kube.Get(ctx, fc.c, kube.ClusterRoleBindings, "", "default:gc8-cloud-provider"); len(crb.Subjects) != 1 {
		t.Errorf("ClusterRoleBinding not repaired: %+v", crb.Subjects)
	}
}

// An object of one of the account's names that the driver did not make — unlabelled, or made for another guest
// cluster — is refused, named, and left as it is.
func TestCloudProviderAccountRefusesObjectsNotItsOwn(t *testing.T) {
	ctx := context.Background()
	foreign := func(ns, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	otherCluster := map[string]string{config.LabelCreator: config.CreatorName, config.LabelGuestCluster: "gc9"}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "default"}}
	for _, tt := range []struct {
		object accountObject
		labels map[string]string
		seed   func(fc *fakeCluster, m metav1.ObjectMeta)
	}{
		{accountObjects("default", "gc8")[0], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.ServiceAccounts, m.Namespace, &corev1.ServiceAccount{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[0], otherCluster, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.ServiceAccounts, m.Namespace, &corev1.ServiceAccount{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[1], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			m.Annotations = map[string]string{corev1.ServiceAccountNameKey: "default"}
			fc.ok(kube.Create(ctx, fc.c, kube.Secrets, m.Namespace, &corev1.Secret{ObjectMeta: m, Type: corev1.SecretTypeServiceAccountToken,
				Data: map[string][]byte{"token": []byte("the default account's token"), "ca.crt": []byte("ca")}}))
		}},
		{accountObjects("default", "gc8")[2], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.Roles, m.Namespace, &rbacv1.Role{ObjectMeta: m, Rules: []rbacv1.PolicyRule{r("", "secrets", "*")}}))
		}},
		{accountObjects("default", "gc8")[3], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.RoleBindings, m.Namespace, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.Name}}))
		}},
		{accountObjects("default", "gc8")[4], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.Roles, m.Namespace, &rbacv1.Role{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[5], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.RoleBindings, m.Namespace, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.Name}}))
		}},
		{accountObjects("default", "gc8")[6], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.ClusterRoles, "", &rbacv1.ClusterRole{ObjectMeta: m}))
		}},
		{accountObjects("default", "gc8")[7], nil, func(fc *fakeCluster, m metav1.ObjectMeta) {
			fc.ok(kube.Create(ctx, fc.c, kube.ClusterRoleBindings, "", &rbacv1.ClusterRoleBinding{ObjectMeta: m, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}))
		}},
	} {
		o := tt.object
		what := o.kind + " " + strings.TrimPrefix(o.ns+"/"+o.name, "/")
		t.Run(what, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.harvesterSystem()
			captureLog(t)
			tt.seed(fc, foreign(o.ns, o.name, tt.labels))
			before, err := o.get(ctx, fc.c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ensureCloudProviderAccount(ctx, fc.c, CloudProviderAccount{Namespace: "default", Cluster: "gc8"})
			if err == nil || !strings.Contains(err.Error(), what+" exists and was not made by the node driver for guest cluster gc8") {
				t.Fatalf("got %v", err)
			}
			after, err := o.get(ctx, fc.c)
			if err != nil || after.GetResourceVersion() != before.GetResourceVersion() || !reflect.DeepEqual(after, before) {
				t.Errorf("the object was changed: %v\nbefore %+v\nafter  %+v", err, before, after)
			}
		})
	}
}

func TestCloudProviderAccountRejects(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterSystem()
	captureLog(t)
	ctx := context.Background()
	tests := []struct {
		acct CloudProviderAccount
		want string
	}{
		{CloudProviderAccount{Namespace: "default", Cluster: "gc8", Server: "https://rancher.example.com/k8s/clusters/c-m-abc12"}, "is a Rancher proxy URL"},
		{CloudProviderAccount{Namespace: "default", Cluster: "gc8", Server: "http://10.0.0.1:6443"}, "must be an https URL"},
		{CloudProviderAccount{Namespace: "nowhere", Cluster: "gc8"}, "namespace nowhere does not exist in Harvester"},
		{CloudProviderAccount{Namespace: "default", Cluster: "Bad_Name"}, `guest cluster name "Bad_Name" cannot name the guest cluster's ServiceAccount`},
		{CloudProviderAccount{Namespace: "default", Cluster: "default"}, `guest cluster name "default" is refused`},
		{CloudProviderAccount{Namespace: "default", Cluster: "gc8", ServiceAccount: "default"}, `service account name "default" is refused: it is the namespace's own ServiceAccount`},
		{CloudProviderAccount{Namespace: "default", Cluster: "gc8", ServiceAccount: "Bad_Name"}, `service account name "Bad_Name" is not a valid ServiceAccount name`},
	}
	for _, tt := range tests {
		if _, err := ensureCloudProviderAccount(ctx, fc.c, tt.acct); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.acct, err, tt.want)
		}
	}
	if sas, err := kube.List(ctx, fc.c, kube.ServiceAccounts, "default", metav1.ListOptions{}); err != nil || len(sas) != 0 {
		t.Errorf("a refused account made ServiceAccounts: %v %v", err, sas)
	}
}

// The pre-flight asks for every permission the roles grant: the API server lets a credential grant only what it holds.
func TestCloudProviderAccessCoversTheRoles(t *testing.T) {
	asked := map[string]bool{}
	for _, a := range cloudProviderAccess {
		asked[a.String()+" cluster="+map[bool]string{true: "yes", false: "no"}[a.ClusterScoped]] = true
	}
	for _, want := range []string{
		"patch virtualmachines cluster=no", "update virtualmachines/addvolume cluster=no", "delete volumeremoterestores cluster=no",
		"update networkfilesystems in namespace harvester-system cluster=no", "create roles in namespace harvester-system cluster=no",
		"get settings server-version cluster=yes", "get settings csi-driver-config cluster=yes", "list volumeattachments cluster=yes",
		"create clusterroles cluster=yes", "create clusterrolebindings cluster=yes", "create roles cluster=no", "create rolebindings cluster=no",
	} {
		if !asked[want] {
			t.Errorf("the pre-flight does not ask for %s", want)
		}
	}
	if n, want := len(ruleAccess(guestRules, "", false)), 30; n != want {
		t.Errorf("%d questions for the namespace's rules, want %d", n, want)
	}
}

// The README's table says what the roles hold, row for rule.
func TestCloudProviderREADMETable(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "**What the account may do**")
	if !ok {
		t.Fatal("README.md lacks the table of what the guest's account may do")
	}
	_, table, _ = strings.Cut(table, "|---")
	var rows [][]string
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(line, " | ")
		for i := range cells {
			cells[i] = strings.Trim(cells[i], "| ")
		}
		rows = append(rows, cells)
	}
	used := make([]bool, len(rows))
	for _, set := range []struct {
		where string
		rules []rbacv1.PolicyRule
	}{{"namespace", guestRules}, {"`harvester-system`", networkFilesystemRules}, {"cluster", guestClusterRules}} {
		for _, rule := range set.rules {
			group := "`" + rule.APIGroups[0] + "`"
			if rule.APIGroups[0] == "" {
				group = "core"
			}
			found := false
			for i, row := range rows {
				if len(row) != 6 || row[1] != group || row[3] != strings.Join(rule.Verbs, ", ") || row[4] != set.where {
					continue
				}
				names := slices.Concat(rule.Resources, rule.ResourceNames)
				if !slices.ContainsFunc(names, func(n string) bool { return !strings.Contains(row[2], "`"+n+"`") }) {
					found, used[i] = true, true
				}
			}
			if !found {
				t.Errorf("no README row for %s %v %v %v (%s)", group, rule.Resources, rule.ResourceNames, rule.Verbs, set.where)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("README row %v matches no rule", rows[i])
		}
	}
}
